# SPDX-License-Identifier: Apache-2.0
# `mpirun -np 2 capplan calibrate --backend host --collectives-only` measures every MPI collective
# and fits each one.
#
#   cmake -DEXE=<capplan> -DMPIRUN=<mpirun or empty> -DDIR=<scratch folder> -P mpi_collectives.cmake
#
# Prints "SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION) when mpirun is missing.
cmake_minimum_required(VERSION 3.25)

if(NOT MPIRUN)
  message(STATUS "SKIPPED: mpirun not found (install openmpi-bin to test the MPI collectives)")
  return()
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(profile "${DIR}/collectives.json")
# --oversubscribe: 2 ranks may exceed the slots of a small CI machine; --allow-run-as-root: CI
# containers run as root, which Open MPI refuses otherwise.
execute_process(COMMAND "${MPIRUN}" -np 2 --oversubscribe --allow-run-as-root
                        "${EXE}" calibrate --backend host --collectives-only --quick --out "${profile}" --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun ... calibrate exited ${rc}\n${out}\n${err}")
endif()
string(JSON collectives GET "${out}" records_count collective)
string(JSON ranks GET "${out}" ranks)
if(NOT ranks EQUAL 2 OR collectives LESS 25)
  message(FATAL_ERROR "expected >= 25 collective records from 2 ranks: ${out}")
endif()
file(READ "${profile}" text)
string(JSON fits LENGTH "${text}" collectives)
set(kinds "")
math(EXPR last "${fits} - 1")
foreach(i RANGE ${last})
  string(JSON kind GET "${text}" collectives ${i} kind)
  string(JSON busbw GET "${text}" collectives ${i} busbw_Bps value)
  string(JSON tier GET "${text}" collectives ${i} tier)
  list(APPEND kinds ${kind})
  message(STATUS "${kind} (2 ranks, ${tier}): fitted busbw ${busbw} B/s")
endforeach()
list(SORT kinds)
if(NOT kinds STREQUAL "all_gather;all_reduce;all_to_all;reduce_scatter;send_recv")
  message(FATAL_ERROR "expected one fit per collective kind; got ${kinds}")
endif()
