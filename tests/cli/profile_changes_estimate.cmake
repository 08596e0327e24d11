# SPDX-License-Identifier: Apache-2.0
# `capplan estimate SCENARIO --profile P` prices the same scenario differently from the datasheet
# model, and names the profile as its cost model.
#   cmake -DEXE=<capplan> -DSCENARIO=<file> -DPROFILE=<file> -P profile_changes_estimate.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var EXE SCENARIO PROFILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "profile_changes_estimate.cmake: ${var} is required")
  endif()
endforeach()

# Same fixed layout both times, so only the cost model differs.
set(layout --tp 8 --pp 1 --dp 8 --micro-batch 1 --format json)
execute_process(COMMAND ${EXE} estimate ${SCENARIO} ${layout} RESULT_VARIABLE rc0 OUTPUT_VARIABLE out0 ERROR_VARIABLE err0)
execute_process(COMMAND ${EXE} estimate ${SCENARIO} ${layout} --profile ${PROFILE}
                RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0)
  message(FATAL_ERROR "exit codes ${rc0} (datasheet) and ${rc1} (profile), expected 0 and 0\n${err0}\n${err1}")
endif()
string(JSON step0 GET "${out0}" step_time_s)
string(JSON step1 GET "${out1}" step_time_s)
string(JSON model0 GET "${out0}" cost_model)
string(JSON model1 GET "${out1}" cost_model)
if(NOT model0 STREQUAL "datasheet")
  message(FATAL_ERROR "cost_model without --profile is '${model0}', expected 'datasheet'")
endif()
if(NOT model1 MATCHES "^calibrated: ")
  message(FATAL_ERROR "cost_model with --profile is '${model1}', expected 'calibrated: ...'")
endif()
if(step0 STREQUAL step1)
  message(FATAL_ERROR "step_time_s is ${step0} with and without --profile: the profile was not used")
endif()
if(NOT out1 MATCHES "profile: [^\"]*datasheet used")
  message(FATAL_ERROR "no coverage warning ('profile: ... datasheet used') in:\n${out1}")
endif()
message(STATUS "step_time_s: datasheet ${step0} s, calibrated ${step1} s (${model1})")
