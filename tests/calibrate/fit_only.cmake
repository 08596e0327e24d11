# SPDX-License-Identifier: Apache-2.0
# `capplan calibrate --fit-only RECORDS --out PROFILE` on a sweep cut off in the middle: the records
# a stopped run leaves (the first GEMMs and memory kernels, no training step) still fit a profile,
# marked partial in its notes, that `capplan estimate --profile` prices with. Then the refusals:
# the records file as --out, a records file with nothing in it, a missing file.
#
#   cmake -DEXE=<capplan> -DRECORDS=<a complete records file> -DSCENARIO=<scenario> -DDIR=<scratch>
#         -P fit_only.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
file(READ "${RECORDS}" whole)

# Cut the sweep where a time limit would: the plan measures GEMMs, then memory kernels, then launch
# and the training step (calibration_run.cpp), so keep 9 GEMMs and 4 memory kernels and no step.
set(cut "${whole}")
string(JSON gemms LENGTH "${cut}" gemms)
string(JSON memory LENGTH "${cut}" memory)
set(keep_gemms 9)
set(keep_memory 4)
math(EXPR last "${gemms} - 1")
foreach(i RANGE ${last} ${keep_gemms} -1)
  string(JSON cut REMOVE "${cut}" gemms ${i})
endforeach()
math(EXPR last "${memory} - 1")
foreach(i RANGE ${last} ${keep_memory} -1)
  string(JSON cut REMOVE "${cut}" memory ${i})
endforeach()
string(JSON cut SET "${cut}" steps "[]")
set(records "${DIR}/cut.records.json")
file(WRITE "${records}" "${cut}")

set(profile "${DIR}/cut.json")
execute_process(COMMAND "${EXE}" calibrate --fit-only "${records}" --out "${profile}" --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
string(JSON fit_only ERROR_VARIABLE bad GET "${o}" fit_only)
string(JSON n_gemm ERROR_VARIABLE bad2 GET "${o}" records_count gemm)
if(NOT rc EQUAL 0 OR bad OR bad2 OR NOT fit_only OR NOT n_gemm EQUAL keep_gemms OR NOT EXISTS "${profile}")
  message(FATAL_ERROR "--fit-only: exit ${rc}, fit_only '${fit_only}', gemm records '${n_gemm}' "
                      "(expected ${keep_gemms}) ${bad} ${bad2}; stdout: ${o}; stderr: ${e}")
endif()
file(READ "${profile}" p)
string(JSON note ERROR_VARIABLE bad GET "${p}" notes 0)
if(bad OR NOT note MATCHES "^partial calibration: fitted to the 13 records of 'cut.records.json', a sweep cut off")
  message(FATAL_ERROR "the profile of a cut-off sweep does not say it is partial: '${note}' ${bad}")
endif()
string(JSON points ERROR_VARIABLE bad LENGTH "${p}" gemm_points)
if(bad OR NOT points EQUAL keep_gemms)
  message(FATAL_ERROR "the profile holds ${points} GEMM points, not the ${keep_gemms} measured ${bad}")
endif()
# The records file is read, never rewritten.
file(READ "${records}" after)
if(NOT after STREQUAL cut)
  message(FATAL_ERROR "--fit-only rewrote its records file")
endif()
execute_process(COMMAND "${EXE}" estimate "${SCENARIO}" --profile "${profile}" --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
string(JSON step ERROR_VARIABLE bad GET "${o}" step_time_s)
if(NOT rc EQUAL 0 OR bad OR NOT step GREATER 0)
  message(FATAL_ERROR "estimate --profile with the partial profile: exit ${rc}, step '${step}' ${bad}; ${e}")
endif()

# The whole records file fits a profile that is not marked partial (it ends with its step).
execute_process(COMMAND "${EXE}" calibrate --fit-only "${RECORDS}" --out "${DIR}/whole.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
file(READ "${DIR}/whole.json" p)
if(NOT rc EQUAL 0 OR p MATCHES "partial calibration" OR NOT o MATCHES "Fitted a profile of AMD EPYC \\(host, 1 rank\\) to 46 records")
  message(FATAL_ERROR "--fit-only on a whole sweep: exit ${rc}; stdout: ${o}; stderr: ${e}")
endif()

# Refusals: exit 2, the field named, nothing written.
function(expect_refusal regex)
  execute_process(COMMAND "${EXE}" calibrate ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 2 OR NOT e MATCHES "${regex}")
    message(FATAL_ERROR "calibrate ${ARGN}: exit ${rc} (expected 2 and '${regex}'); stderr: ${e}")
  endif()
endfunction()
expect_refusal("--out '.*cut.records.json': is the records file --fit-only reads" --fit-only "${records}" --out "${records}")
set(empty "${whole}")
foreach(list gemms memory collectives steps)
  string(JSON empty SET "${empty}" ${list} "[]")
endforeach()
file(WRITE "${DIR}/empty.records.json" "${empty}")
expect_refusal("--fit-only '.*empty.records.json': holds no measurements" --fit-only "${DIR}/empty.records.json" --out "${DIR}/never.json")
expect_refusal("--fit-only.*missing.records.json" --fit-only "${DIR}/missing.records.json" --out "${DIR}/never.json")
expect_refusal("excludes --resume|--resume excludes|--fit-only excludes" --fit-only "${records}" --resume)
if(EXISTS "${DIR}/never.json")
  message(FATAL_ERROR "a refused --fit-only wrote a profile")
endif()
message(STATUS "a cut-off sweep of ${keep_gemms} GEMMs and ${keep_memory} memory kernels fitted a partial profile; step ${step} s")
