# SPDX-License-Identifier: Apache-2.0
# Runs capplan-gui --screenshot and checks that it wrote a non-empty PNG.
file(REMOVE "${OUT}")
execute_process(COMMAND "${EXE}" --screenshot "${OUT}" --tab "${TAB}" ${SCENARIO} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "capplan-gui --screenshot exited with ${rc}\n${out}\n${err}")
endif()
if(NOT EXISTS "${OUT}")
  message(FATAL_ERROR "capplan-gui --screenshot wrote no file")
endif()
file(SIZE "${OUT}" size)
file(READ "${OUT}" magic LIMIT 8 HEX)
if(size LESS 10000 OR NOT magic STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "not a plausible PNG: ${size} bytes, magic ${magic}")
endif()
message(STATUS "screenshot: ${size} bytes")
