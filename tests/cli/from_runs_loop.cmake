# SPDX-License-Identifier: Apache-2.0
# The whole --from-runs loop with the real binary: runs file -> calibrate --from-runs -> profile ->
# estimate --profile moves the prediction of a run toward its measurement; validate-published
# --profile names the fitted cost model.
#   cmake -DEXE=<capplan> -DRUNS=<runs.json> -DSCENARIO=<run 1's scenario> -DDIR=<scratch> -P from_runs_loop.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var EXE RUNS SCENARIO DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "from_runs_loop.cmake: ${var} is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(profile "${DIR}/runs-profile.json")

execute_process(COMMAND ${EXE} calibrate --from-runs ${RUNS} --out ${profile} --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${profile}")
  message(FATAL_ERROR "calibrate --from-runs exited ${rc}\n${out}\n${err}")
endif()
string(JSON loo GET "${out}" runs_fit loo_mape)
string(JSON gemm GET "${out}" runs_fit gemm_efficiency_scale value)
string(JSON measured GET "${out}" runs_fit per_run 0 measured_step_s)
message(STATUS "fitted gemm_efficiency_scale ${gemm}, leave-one-out MAPE ${loo}")
file(GLOB written LIST_DIRECTORIES true "${DIR}/*" "${DIR}/.*")
if(NOT written STREQUAL "${profile}")
  message(FATAL_ERROR "expected only the profile in ${DIR}; found: ${written}")
endif()

# Run 1 of the runs file is its first scenario as it stands.
execute_process(COMMAND ${EXE} estimate ${SCENARIO} --format json RESULT_VARIABLE rc0 OUTPUT_VARIABLE out0)
execute_process(COMMAND ${EXE} estimate ${SCENARIO} --profile ${profile} --format json
                RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0)
  message(FATAL_ERROR "estimate exited ${rc0} (datasheet) and ${rc1} (profile)\n${err1}")
endif()
string(JSON step0 GET "${out0}" step_time_s)
string(JSON step1 GET "${out1}" step_time_s)
string(JSON model1 GET "${out1}" cost_model)
if(NOT model1 MATCHES "^calibrated from 8 runs: h800-sxm-80gb \\([0-9-]+\\)$")
  message(FATAL_ERROR "cost_model with the runs profile is '${model1}'")
endif()
# |error| in micro-units of the measurement, without floating point in CMake: compare via python-free
# fixed-point math on the first 6 decimals of the seconds.
function(micro out value)
  string(REGEX MATCH "^([0-9]+)\\.?([0-9]*)" _ "${value}")
  string(SUBSTRING "${CMAKE_MATCH_2}000000" 0 6 frac)
  math(EXPR v "${CMAKE_MATCH_1} * 1000000 + 1${frac} - 1000000")
  set(${out} ${v} PARENT_SCOPE)
endfunction()
micro(m "${measured}")
micro(a "${step0}")
micro(b "${step1}")
math(EXPR e0 "${a} - ${m}")
math(EXPR e1 "${b} - ${m}")
if(e0 LESS 0)
  math(EXPR e0 "-${e0}")
endif()
if(e1 LESS 0)
  math(EXPR e1 "-${e1}")
endif()
message(STATUS "run 1: measured ${measured} s, datasheet ${step0} s, fitted ${step1} s")
if(NOT e1 LESS e0)
  message(FATAL_ERROR "the profile did not move the estimate toward the measurement: |${step1} - ${measured}| >= |${step0} - ${measured}|")
endif()
math(EXPR limit "${m} / 100")
if(e1 GREATER limit)
  message(FATAL_ERROR "fitted estimate ${step1} s is more than 1% from the synthetic measurement ${measured} s")
endif()

# search takes the profile too.
execute_process(COMMAND ${EXE} search ${SCENARIO} --profile ${profile} --format json --top 1
                RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2 ERROR_VARIABLE err2)
if(NOT rc2 EQUAL 0 OR NOT out2 MATCHES "\"cost_model\": \"calibrated from 8 runs: h800-sxm-80gb")
  message(FATAL_ERROR "search --profile exited ${rc2}\n${err2}")
endif()
