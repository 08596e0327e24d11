# SPDX-License-Identifier: Apache-2.0
# --out under signals and concurrency: nothing half-written,
# no temporary file left behind.
#
#   cmake -DEXE=<capplan> -DSCENARIO=<scenario.json> -DSEARCH_SCENARIO=<scenario.json>
#         -DSERVE_SCENARIO=<serve scenario.json> -DDIR=<scratch folder> -DCASE=<case> -P interrupted_writes.cmake
#
# CASE:
#   file_size_limit  `ulimit -f 1` makes the kernel send SIGXFSZ in the middle of the write (a
#                    signal that always lands inside it): exit 2 naming the write, no file, no
#                    temporary file. Before the fix the signal killed capplan and left the
#                    temporary file, half-written.
#   sigterm          estimate --out, search --out and serve --out, each sent SIGTERM (and SIGINT) at 12 delays
#                    from 0 to 0.6 s: the --out file is absent or a whole JSON document, and no
#                    temporary file is left.
#   concurrent       50 `capplan estimate --out` of one file at once: every one exits 0, the file is
#                    one whole JSON document (one writer's), and no temporary file is left.
cmake_minimum_required(VERSION 3.25)

foreach(v EXE SCENARIO SEARCH_SCENARIO SERVE_SCENARIO DIR CASE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "interrupted_writes.cmake: ${v} is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(out "${DIR}/result.json")

# Fails unless ${DIR} holds nothing but (optionally) a whole JSON document in result.json.
function(expect_clean what allow_absent)
  file(GLOB leftovers LIST_DIRECTORIES true "${DIR}/.*" "${DIR}/*")
  list(REMOVE_ITEM leftovers "${out}")
  if(leftovers)
    message(FATAL_ERROR "${what}: left behind: ${leftovers}")
  endif()
  if(NOT EXISTS "${out}")
    if(NOT allow_absent)
      message(FATAL_ERROR "${what}: no ${out}")
    endif()
    return()
  endif()
  file(READ "${out}" text)
  # The whole text parses as one JSON object (a truncated document does not).
  string(JSON kind ERROR_VARIABLE bad TYPE "${text}")
  if(bad OR NOT kind STREQUAL "OBJECT")
    string(LENGTH "${text}" n)
    message(FATAL_ERROR "${what}: ${out} is not a whole JSON document (${n} bytes): ${bad}")
  endif()
endfunction()

if(CASE STREQUAL "file_size_limit")
  execute_process(COMMAND sh -c "ulimit -f 1 && exec \"$0\" estimate \"$1\" --format json --out \"$2\""
                          "${EXE}" "${SCENARIO}" "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc STREQUAL "2" OR NOT e MATCHES "capplan: error: --out '.*result.json': cannot write '.*': File too large")
    message(FATAL_ERROR "exit ${rc} (expected 2, as for any --out it cannot write, and a 'File too large' error); stderr: ${e}")
  endif()
  file(REMOVE "${out}")
  expect_clean("a write past the file size limit" TRUE)
elseif(CASE STREQUAL "sigterm")
  foreach(command "estimate" "search" "serve")
    set(input "${SCENARIO}")
    if(command STREQUAL "search")
      set(input "${SEARCH_SCENARIO}")
    elseif(command STREQUAL "serve")
      set(input "${SERVE_SCENARIO}")
    endif()
    foreach(signal TERM INT)
      foreach(delay 0 0.02 0.05 0.08 0.1 0.12 0.15 0.2 0.25 0.3 0.4 0.6)
        file(REMOVE "${out}")
        execute_process(COMMAND sh -c "\"$0\" ${command} \"$1\" --format json --out \"$2\" 2>/dev/null & p=$!; sleep ${delay}; kill -${signal} $p 2>/dev/null; wait $p; echo $?"
                                "${EXE}" "${input}" "${out}"
                        RESULT_VARIABLE rc OUTPUT_VARIABLE code)
        expect_clean("${command} sent SIG${signal} after ${delay} s (exit ${code})" TRUE)
      endforeach()
    endforeach()
  endforeach()
elseif(CASE STREQUAL "concurrent")
  execute_process(COMMAND sh -c "i=0; while [ $i -lt 50 ]; do i=$((i+1)); (\"$0\" estimate \"$1\" --tokens \${i}T --format json --out \"$2\" || echo \"writer $i: exit $?\") & done; wait"
                          "${EXE}" "${SCENARIO}" "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 0 OR o MATCHES "writer")
    message(FATAL_ERROR "concurrent writers failed: ${o}${e}")
  endif()
  expect_clean("50 concurrent writers" FALSE)
  file(READ "${out}" text)
  string(JSON tokens ERROR_VARIABLE bad GET "${text}" scenario tokens)
  message(STATUS "the last writer's document: tokens ${tokens}")
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
