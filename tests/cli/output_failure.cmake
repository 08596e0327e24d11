# SPDX-License-Identifier: Apache-2.0
# A command whose standard output cannot be written must not exit 0.
#   cmake -DEXE=<capplan> "-DARGS=a|b" -DHOW=full|closed -P output_failure.cmake
# full: stdout is /dev/full (every write fails with ENOSPC); closed: stdout is closed (EBADF).
# Expects exit code 1 and "capplan: error: cannot write to standard output" on stderr.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" args "${ARGS}")
if(HOW STREQUAL "full")
  execute_process(COMMAND "${EXE}" ${args} OUTPUT_FILE /dev/full RESULT_VARIABLE rc ERROR_VARIABLE err)
else()
  execute_process(COMMAND sh -c "exec \"$0\" \"$@\" >&-" "${EXE}" ${args} RESULT_VARIABLE rc ERROR_VARIABLE err)
endif()
if(NOT rc STREQUAL "1" OR NOT err MATCHES "capplan: error: cannot write to standard output: ")
  message(FATAL_ERROR "${EXE} ${args} (stdout ${HOW}): exit code ${rc}, expected 1 with the reason\n--- stderr ---\n${err}")
endif()
