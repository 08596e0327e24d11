# SPDX-License-Identifier: Apache-2.0
# The binaries built to be carried to a bare GPU machine (the gpu-carry preset) need no library
# such a machine lacks: `scripts/gpu-check.sh --check-carry` passes on them (every library
# resolves, and each is a CUDA library or the C library's own). The same check fails on the
# release build's binaries, which link OpenMPI and libstdc++, so it can tell the two apart.
#
#   cmake -DSCRIPT=<scripts/gpu-check.sh> -DCARRY=<build/gpu-carry/cli> -DRELEASE=<build/release/cli> -P gpu_carry_check.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT EXISTS "${CARRY}/capplan-calibrate")
  message(STATUS "SKIPPED: no gpu-carry build at ${CARRY} (cmake --build --preset gpu-carry builds it)")
  return()
endif()
execute_process(COMMAND bash "${SCRIPT}" --check-carry "${CARRY}" RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the carried binaries need libraries a bare GPU machine lacks (exit ${rc}):\n${o}${e}")
endif()
message(STATUS "${o}")
execute_process(COMMAND bash "${SCRIPT}" --check-carry "${RELEASE}" RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(rc EQUAL 0 OR NOT o MATCHES "needs libraries a bare GPU machine lacks: .*lib(mpi|stdc)")
  message(FATAL_ERROR "--check-carry passed the release build's binaries (exit ${rc}):\n${o}${e}")
endif()
