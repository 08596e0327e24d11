# SPDX-License-Identifier: Apache-2.0
# scripts/cluster/calibrate.sbatch refuses, before using the allocation, what it cannot run, with
# its exit code and a message naming what is missing or wrong: run outside a Slurm job (2), capplan
# not found (127, given or on PATH), capplan-calibrate not beside capplan (127), an unknown option
# or backend (2). No Slurm is needed: the script checks these before it launches anything.
#
#   cmake -DSCRIPT=<calibrate.sbatch> -DDIR=<scratch folder> -P sbatch_refusals.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/alone")
# A capplan with no capplan-calibrate beside it.
file(WRITE "${DIR}/alone/capplan" "#!/bin/sh\nexit 0\n")
file(CHMOD "${DIR}/alone/capplan" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
# The script's own configuration comes from the environment: start from none of it.
foreach(var CAPPLAN_OUT CAPPLAN_QUICK CAPPLAN_BACKEND CAPPLAN_BIN CAPPLAN_RANKS_PER_NODE CAPPLAN_LAUNCHER
            CAPPLAN_RESUME CAPPLAN_CALIBRATE_ARGS CAPPLAN_LAUNCHER_ARGS)
  unset(ENV{${var}})
endforeach()

set(failures "")
# case(<name> <SLURM_JOB_ID or "">  <expected rc> <stderr regex> <args...>)
function(case name job_id expect_rc regex)
  if(job_id STREQUAL "")
    unset(ENV{SLURM_JOB_ID})
  else()
    set(ENV{SLURM_JOB_ID} "${job_id}")
  endif()
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc OR NOT err MATCHES "${regex}")
    set(failures "${failures}\n  ${name}: expected exit ${expect_rc} and stderr matching '${regex}'; got exit ${rc}, stderr: ${err}"
        PARENT_SCOPE)
  else()
    message(STATUS "${name}: exit ${rc}: ${err}")
  endif()
endfunction()

case(outside_slurm "" 2 "error: not inside a Slurm job: submit this script with sbatch"
     bash "${SCRIPT}" --quick --capplan "${DIR}/alone/capplan")
case(capplan_path_missing 1 127 "error: capplan not found: '${DIR}/nowhere/capplan' is not an executable file"
     bash "${SCRIPT}" --quick --capplan "${DIR}/nowhere/capplan" --out "${DIR}/out")
case(capplan_not_on_path 1 127 "error: capplan not found on PATH; set CAPPLAN_BIN"
     ${CMAKE_COMMAND} -E env "PATH=${DIR}/empty-path" /bin/bash "${SCRIPT}" --quick --out "${DIR}/out")
case(calibrate_program_missing 1 127 "error: capplan-calibrate not found beside '${DIR}/alone/capplan'"
     bash "${SCRIPT}" --capplan "${DIR}/alone/capplan" --out "${DIR}/out")
case(unknown_option 1 2 "error: unknown option '--qiuck'" bash "${SCRIPT}" --qiuck)
case(unknown_backend 1 2 "error: --backend: must be host or cuda; got 'tpu'" bash "${SCRIPT}" --backend tpu)

if(EXISTS "${DIR}/out")
  string(APPEND failures "\n  a refused job created its output folder '${DIR}/out'")
endif()
if(failures)
  message(FATAL_ERROR "calibrate.sbatch refusals:${failures}")
endif()
