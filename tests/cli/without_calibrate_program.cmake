# SPDX-License-Identifier: Apache-2.0
# capplan alone in a folder (an install that lacks capplan-calibrate): `capplan calibrate` and
# `capplan validate` say what is missing and exit 2; estimate still works.
#
#   cmake -DEXE=<capplan> -DDIR=<scratch folder> -P without_calibrate_program.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
file(COPY "${EXE}" DESTINATION "${DIR}")
get_filename_component(name "${EXE}" NAME)
set(alone "${DIR}/${name}")

set(failures "")
foreach(args "calibrate;--backend;cuda;--quick;--out;${DIR}/p.json" "validate;--profile;${DIR}/p.json;--backend;cuda")
  execute_process(COMMAND "${alone}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "capplan: error: the measurement program '[^']*capplan-calibrate' is missing")
    string(APPEND failures "\n  capplan ${args}: exit ${rc}, stderr: ${err}")
  endif()
endforeach()
execute_process(COMMAND "${alone}" estimate --format json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"step_time_s\"")
  string(APPEND failures "\n  capplan estimate: exit ${rc}, stderr: ${err}")
endif()
if(failures)
  message(FATAL_ERROR "capplan without capplan-calibrate:${failures}")
endif()
