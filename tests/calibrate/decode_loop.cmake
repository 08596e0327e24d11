# SPDX-License-Identifier: Apache-2.0
# For real on the host: calibrate --quick for a serving decode step, then
# capplan validate runs that decode step and compares it with the profile's prediction.
#
#   cmake -DEXE=<capplan> -DDIR=<scratch folder> -DMAX_ERROR=<fraction> -DMAX_ATTEMPTS=<n> -P decode_loop.cmake
#
# Checks: both exit 0; validate reports kind "decode" with the step's context and batch, every
# component priced and measured; |relative error| <= MAX_ERROR. Both sides are measurements on a
# shared machine: a miss is re-measured up to MAX_ATTEMPTS times, each attempt's figure printed.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(profile "${DIR}/decode-profile.json")
# 16 sequences over 1,024 tokens: 67 MB of K and V per layer in fp32, past the host's last-level
# cache as a serving KV cache is past a GPU's L2 (the host backend times GEMMs on warm operands;
# the CUDA backend rotates them, backend.hpp rotation_sets).
set(step --decode-context 1024 --micro-batch 16)
set(attempt 0)
while(TRUE)
  math(EXPR attempt "${attempt} + 1")
  execute_process(COMMAND "${EXE}" calibrate --backend host --quick ${step} --out "${profile}" --format json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "calibrate exited ${rc}\n${out}\n${err}")
  endif()
  execute_process(COMMAND "${EXE}" validate --backend host --profile "${profile}" ${step} --format json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "validate exited ${rc}\n${out}\n${err}")
  endif()
  string(JSON kind GET "${out}" step kind)
  string(JSON context GET "${out}" step decode_context)
  string(JSON batch GET "${out}" step micro_batch)
  if(NOT kind STREQUAL "decode" OR NOT context EQUAL 1024 OR NOT batch EQUAL 16)
    message(FATAL_ERROR "validate did not run the decode step: ${out}")
  endif()
  foreach(component gemm attention memory)
    string(JSON measured GET "${out}" components ${component} measured_s)
    string(JSON predicted GET "${out}" components ${component} predicted_s)
    if(NOT measured GREATER 0 OR NOT predicted GREATER 0)
      message(FATAL_ERROR "component ${component} not measured and priced: ${out}")
    endif()
  endforeach()
  string(JSON err_frac GET "${out}" relative_error)
  message(STATUS "attempt ${attempt}: decode step relative error ${err_frac}")
  string(REGEX REPLACE "^-" "" abs_err "${err_frac}")
  if(abs_err LESS_EQUAL MAX_ERROR)
    break()
  endif()
  if(attempt GREATER_EQUAL MAX_ATTEMPTS)
    message(FATAL_ERROR "decode step error ${err_frac} beyond ${MAX_ERROR} in ${MAX_ATTEMPTS} attempts")
  endif()
endwhile()
