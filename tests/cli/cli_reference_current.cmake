# SPDX-License-Identifier: Apache-2.0
# docs/cli.md is generated from the binary's --help (scripts/cli-reference.sh): regenerate it and
# fail when the committed page differs, naming the command that brings it up to date.
get_filename_component(dir ${FRESH} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
execute_process(COMMAND bash ${SCRIPT} ${EXE} OUTPUT_FILE ${FRESH} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "scripts/cli-reference.sh failed (${rc})")
endif()
file(READ ${FRESH} fresh)
file(READ ${DOC} committed)
if(NOT fresh STREQUAL committed)
  message(FATAL_ERROR "docs/cli.md is stale against the binary's --help: run "
                      "'scripts/cli-reference.sh build/release/cli/capplan > docs/cli.md' (fresh copy: ${FRESH})")
endif()
