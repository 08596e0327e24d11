# SPDX-License-Identifier: Apache-2.0
# Runs one command and checks its exit code AND its output, so a CLI test can assert both
# (CTest's PASS_REGULAR_EXPRESSION alone ignores the exit code).
#
#   cmake -DEXE=<program> "-DARGS=a|b|c" [-DINPUT_FILE=f] [-DEXPECT_RC=0]
#         [-DSTDOUT_REGEX=re] [-DSTDERR_REGEX=re] [-DSTDOUT_NOT_REGEX=re] [-DSTDERR_NOT_REGEX=re]
#         [-DNO_NAN_INF=1]                     # neither stream contains nan/inf as a word (any case)
#         [-DOUT_FILE=f -DOUT_FILE_REGEX=re]   # f is removed first, must exist after, must match;
#                                              # its folder must hold nothing else (no temp files)
#         [-DOUT_FILE_ABSENT=f]                # f's folder is emptied first and must stay empty
#         -P run_expect.cmake
#
# ARGS separates arguments with '|' (a CMake list would be split on the way here).
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED EXE)
  message(FATAL_ERROR "run_expect.cmake: EXE is required")
endif()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
string(REPLACE "|" ";" args "${ARGS}")

set(extra "")
if(DEFINED INPUT_FILE)
  list(APPEND extra INPUT_FILE "${INPUT_FILE}")
endif()
if(DEFINED OUT_FILE)
  get_filename_component(out_dir "${OUT_FILE}" DIRECTORY)
  file(REMOVE_RECURSE "${out_dir}")
  file(MAKE_DIRECTORY "${out_dir}")
endif()
if(DEFINED OUT_FILE_ABSENT)
  get_filename_component(absent_dir "${OUT_FILE_ABSENT}" DIRECTORY)
  file(REMOVE_RECURSE "${absent_dir}")
  file(MAKE_DIRECTORY "${absent_dir}")
endif()

execute_process(COMMAND "${EXE}" ${args} ${extra}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)

set(failures "")
if(NOT rc STREQUAL "${EXPECT_RC}")
  string(APPEND failures "\n  exit code ${rc}, expected ${EXPECT_RC}")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  string(APPEND failures "\n  stdout does not match: ${STDOUT_REGEX}")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  string(APPEND failures "\n  stderr does not match: ${STDERR_REGEX}")
endif()
if(DEFINED STDOUT_NOT_REGEX AND out MATCHES "${STDOUT_NOT_REGEX}")
  string(APPEND failures "\n  stdout matches what it must not: ${STDOUT_NOT_REGEX}")
endif()
if(DEFINED STDERR_NOT_REGEX AND err MATCHES "${STDERR_NOT_REGEX}")
  string(APPEND failures "\n  stderr matches what it must not: ${STDERR_NOT_REGEX}")
endif()
if(NO_NAN_INF)
  string(TOLOWER "${out}\n${err}" both)
  if(both MATCHES "(^|[^a-z0-9_])(nan|inf|infinity)([^a-z0-9_]|$)")
    string(APPEND failures "\n  output contains NaN or Inf: '${CMAKE_MATCH_0}'")
  endif()
endif()
if(DEFINED OUT_FILE)
  if(NOT EXISTS "${OUT_FILE}")
    string(APPEND failures "\n  ${OUT_FILE} was not written")
  else()
    file(READ "${OUT_FILE}" written)
    if(DEFINED OUT_FILE_REGEX AND NOT written MATCHES "${OUT_FILE_REGEX}")
      string(APPEND failures "\n  ${OUT_FILE} does not match: ${OUT_FILE_REGEX}")
    endif()
  endif()
  file(GLOB left LIST_DIRECTORIES true "${out_dir}/*" "${out_dir}/.*")
  list(REMOVE_ITEM left "${OUT_FILE}")
  if(left)
    string(APPEND failures "\n  files left next to the output: ${left}")
  endif()
endif()

if(DEFINED OUT_FILE_ABSENT)
  file(GLOB written LIST_DIRECTORIES true "${absent_dir}/*" "${absent_dir}/.*")
  if(written)
    string(APPEND failures "\n  written although it must not be: ${written}")
  endif()
endif()

if(failures)
  message(FATAL_ERROR "${EXE} ${args}${failures}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
endif()
