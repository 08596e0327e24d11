# SPDX-License-Identifier: Apache-2.0
# SIGTERM (kill, a batch scheduler's time limit) during `capplan calibrate`: the case being measured
# finishes, the records so far are written and a profile is fitted to them, marked partial in its
# notes; exit 143 with the count and how to resume; no temporary file. Then --resume continues from
# the records and writes the whole profile, no longer marked partial.
#
#   cmake -DEXE=<capplan> -DDIR=<scratch folder> -P calibrate_sigterm.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(profile "${DIR}/p.json")
set(records "${DIR}/p.records.json")
execute_process(COMMAND sh -c "\"$0\" calibrate --backend host --quick --out \"$1\" 2>\"$2\" & p=$!; sleep 2; kill -TERM $p; wait $p; echo $?"
                        "${EXE}" "${profile}" "${DIR}/stderr.txt"
                RESULT_VARIABLE rc OUTPUT_VARIABLE code)
string(STRIP "${code}" code)
file(READ "${DIR}/stderr.txt" err)
file(REMOVE "${DIR}/stderr.txt")
if(NOT code STREQUAL "143" OR NOT err MATCHES "capplan: error: terminated: [0-9]+ of [0-9]+ cases are in '.*p.records.json'; a partial profile of those cases was written to '.*p.json'. Run the same command with --resume to continue.")
  message(FATAL_ERROR "exit ${code} (expected 143 and the 'terminated' message); stderr: ${err}")
endif()
if(NOT EXISTS "${profile}")
  message(FATAL_ERROR "an interrupted run wrote no profile of what it had measured")
endif()
file(READ "${profile}" partial)
string(JSON first ERROR_VARIABLE bad GET "${partial}" notes 0)
if(bad OR NOT first MATCHES "^partial calibration: [0-9]+ of [0-9]+ planned cases measured \\(terminated\\)")
  message(FATAL_ERROR "the interrupted run's profile does not say it is partial: '${first}' ${bad}")
endif()
file(GLOB leftovers LIST_DIRECTORIES true "${DIR}/.*" "${DIR}/*")
list(REMOVE_ITEM leftovers "${records}" "${profile}")
if(leftovers)
  message(FATAL_ERROR "left behind: ${leftovers}")
endif()
file(READ "${records}" text)
string(JSON n ERROR_VARIABLE bad LENGTH "${text}" gemms)
if(bad)
  message(FATAL_ERROR "the records file is not a whole document: ${bad}")
endif()
execute_process(COMMAND "${EXE}" calibrate --backend host --quick --out "${profile}" --resume --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
string(JSON resumed ERROR_VARIABLE bad GET "${o}" resumed)
if(NOT rc EQUAL 0 OR bad OR resumed LESS 1 OR NOT EXISTS "${profile}")
  message(FATAL_ERROR "--resume: exit ${rc}, resumed '${resumed}' ${bad}; ${e}")
endif()
file(READ "${profile}" whole)
if(whole MATCHES "partial calibration")
  message(FATAL_ERROR "the completed profile is still marked partial")
endif()
message(STATUS "terminated with ${n} GEMM records; --resume took ${resumed} cases from them")
