# SPDX-License-Identifier: Apache-2.0
# The whole host loop, for real: calibrate --quick -> estimate --profile -> validate -> resume.
#
#   cmake -DEXE=<capplan> -DDIR=<scratch folder> -DSCENARIO=<small fp32 scenario> -DMAX_CALIBRATE_S=<s>
#         -DMAX_ERROR=<fraction> -DMAX_ATTEMPTS=<n> -P calibrate_loop.cmake
#
# Checks: calibrate (with --for-scenario SCENARIO) exits 0 within MAX_CALIBRATE_S and writes the
# profile and its records (and nothing else: no temp files); estimate accepts the profile, says it
# used it and, on SCENARIO's catalog GPU, warns once that it is another device's; validate prices every
# GEMM of SCENARIO from it (it refuses a step the profile does not cover), and validate's
# |relative error| <= MAX_ERROR (its figures are printed); a --resume of the finished run measures
# nothing and still writes the profile. Both sides are measurements on a shared machine: when
# validate misses, calibrate and validate are run again (up to MAX_ATTEMPTS in all) and every
# attempt's figure is printed.
cmake_minimum_required(VERSION 3.25)

function(run_capplan out_var rc_var)
  execute_process(COMMAND "${EXE}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(profile "${DIR}/profile.json")

# 1. calibrate --quick
string(TIMESTAMP t0 "%s" UTC)
run_capplan(out rc calibrate --backend host --quick --for-scenario "${SCENARIO}" --out "${profile}" --format json)
string(TIMESTAMP t1 "%s" UTC)
math(EXPR seconds "${t1} - ${t0}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate exited ${rc}\n${out}\n${last_err}")
endif()
message(STATUS "calibrate --backend host --quick --for-scenario: ${seconds} s wall")
if(seconds GREATER MAX_CALIBRATE_S)
  message(FATAL_ERROR "calibrate --quick took ${seconds} s (limit ${MAX_CALIBRATE_S} s)")
endif()
string(JSON measured GET "${out}" measured)
string(JSON gemms GET "${out}" records_count gemm)
string(JSON steps GET "${out}" records_count step)
if(measured LESS 20 OR gemms LESS 10 OR NOT steps EQUAL 1)
  message(FATAL_ERROR "calibrate measured too little: ${out}")
endif()
file(GLOB written LIST_DIRECTORIES true "${DIR}/*" "${DIR}/.*")
list(SORT written)
if(NOT written STREQUAL "${profile};${DIR}/profile.records.json")
  message(FATAL_ERROR "expected exactly the profile and its records in ${DIR}; found: ${written}")
endif()
file(READ "${profile}" text)
if(text MATCHES "[^a-zA-Z_](nan|inf|NaN|Infinity)[^a-zA-Z_]")
  message(FATAL_ERROR "profile contains NaN/Inf")
endif()

# 2. estimate --profile uses it. The scenario's GPU is a catalog GPU and the profile a CPU's, so
# the estimate says so once, with the count of operations priced from it (the per-op coverage
# notes are validate's, step 3, which prices the host itself).
run_capplan(out rc estimate "${SCENARIO}" --profile "${profile}" --format json)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"cost_model\": \"calibrated: ")
  message(FATAL_ERROR "estimate --profile: exit ${rc}\n${out}\n${last_err}")
endif()
string(REGEX MATCHALL "operations priced from another device's measurements" other_device "${out}")
list(LENGTH other_device other_device_count)
if(NOT other_device_count EQUAL 1)
  message(FATAL_ERROR "estimate with a host profile on a catalog GPU: expected one other-device warning, got "
                      "${other_device_count}:\n${out}")
endif()

# 3. validate: predicted vs measured training step
set(attempt 1)
while(TRUE)
  # validate prices the host itself and refuses a step its profile does not cover (its "profile:
  # gemm ..." warnings, exit 1: the host has no datasheet), so exit 0 says --for-scenario measured
  # every GEMM of SCENARIO.
  run_capplan(out rc validate --backend host --profile "${profile}" --format json)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "validate exited ${rc}\n${out}\n${last_err}")
  endif()
  string(JSON err GET "${out}" relative_error)
  string(JSON predicted GET "${out}" predicted_step_s)
  string(JSON measured GET "${out}" measured_step_s)
  message(STATUS "validate attempt ${attempt}: predicted ${predicted} s, measured ${measured} s, relative error ${err}")
  # |err| <= MAX_ERROR without floating point in CMake: compare the text via math on micro-units.
  string(REGEX REPLACE "^-" "" abs_err "${err}")
  if(abs_err MATCHES "e-")
    set(ok TRUE)  # tiny, printed in exponent form
  else()
    string(REGEX MATCH "^[0-9]+\\.?[0-9]*" abs_err "${abs_err}")
    # Compare as fixed-point with 6 decimals.
    string(REGEX MATCH "^([0-9]+)\\.?([0-9]*)" _ "${abs_err}")
    set(int_part "${CMAKE_MATCH_1}")
    string(SUBSTRING "${CMAKE_MATCH_2}000000" 0 6 frac_part)
    string(REGEX MATCH "^([0-9]+)\\.?([0-9]*)" _ "${MAX_ERROR}")
    set(lim_int "${CMAKE_MATCH_1}")
    string(SUBSTRING "${CMAKE_MATCH_2}000000" 0 6 lim_frac)
    math(EXPR e_micro "${int_part} * 1000000 + 1${frac_part} - 1000000")
    math(EXPR l_micro "${lim_int} * 1000000 + 1${lim_frac} - 1000000")
    if(e_micro LESS_EQUAL l_micro)
      set(ok TRUE)
    else()
      set(ok FALSE)
    endif()
  endif()
  if(ok)
    break()
  endif()
  if(attempt GREATER_EQUAL MAX_ATTEMPTS)
    message(FATAL_ERROR "validate: |relative error| ${abs_err} > ${MAX_ERROR} in ${attempt} attempts\n${out}")
  endif()
  math(EXPR attempt "${attempt} + 1")
  # A miss is most often a calibration disturbed by another job: measure both sides again.
  file(REMOVE "${profile}" "${DIR}/profile.records.json")
  run_capplan(cal rc calibrate --backend host --quick --for-scenario "${SCENARIO}" --out "${profile}" --format json)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "calibrate (attempt ${attempt}) exited ${rc}\n${cal}\n${last_err}")
  endif()
  message(STATUS "re-calibrated for attempt ${attempt}")
endwhile()

# 4. --resume of a finished run measures nothing and rewrites the profile
file(REMOVE "${profile}")
run_capplan(out rc calibrate --backend host --quick --for-scenario "${SCENARIO}" --resume --out "${profile}"
            --format json)
if(NOT rc EQUAL 0 OR NOT EXISTS "${profile}")
  message(FATAL_ERROR "calibrate --resume exited ${rc}\n${out}\n${last_err}")
endif()
string(JSON measured GET "${out}" measured)
string(JSON resumed GET "${out}" resumed)
if(NOT measured EQUAL 0 OR resumed LESS 20)
  message(FATAL_ERROR "calibrate --resume re-measured ${measured} cases (resumed ${resumed})")
endif()
message(STATUS "resume: ${resumed} cases taken from the records, 0 measured")
