# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-check.sh on a machine without a GPU, in its dry-run mode and in its real one: each
# ends within seconds with exit 3, writes at most 7 files (what the GPU machine's call can return),
# and its summary says that no device was found and that nothing was measured. Then a dry run with
# a stand-in nvidia-smi that reports an H200: the profile it would write is named after the
# catalog id (h200-sxm-141gb), and an unknown device after its own name.
#
#   cmake -DSCRIPT=<scripts/gpu-check.sh> -DBIN=<folder with capplan> -DDIR=<scratch> -P gpu_check_dry_run.cmake
cmake_minimum_required(VERSION 3.25)
foreach(mode dry-run real)
  set(out "${DIR}/${mode}")
  file(REMOVE_RECURSE "${out}")
  set(args "${out}")
  if(mode STREQUAL "dry-run")
    set(args --dry-run "${out}")
  endif()
  string(TIMESTAMP t0 "%s" UTC)
  # The budget is small on purpose: a run that tried to build or measure would show as a timeout.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env CAPPLAN_GPU_CHECK_BIN=${BIN} CAPPLAN_GPU_CHECK_BUDGET_S=60
                          bash "${SCRIPT}" ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT 90)
  string(TIMESTAMP t1 "%s" UTC)
  math(EXPR took "${t1} - ${t0}")
  if(NOT rc EQUAL 3)
    message(FATAL_ERROR "gpu-check.sh ${args}: exit ${rc} (expected 3: no device); stdout: ${o}; stderr: ${e}")
  endif()
  # "Quickly": no build, no measurement; 30 s leaves room for a loaded 2-core machine (it takes ~1 s).
  if(took GREATER 30)
    message(FATAL_ERROR "gpu-check.sh ${args} took ${took} s without a device")
  endif()
  file(GLOB files LIST_DIRECTORIES false "${out}/*" "${out}/.*")
  list(LENGTH files n)
  if(n GREATER 7)
    message(FATAL_ERROR "gpu-check.sh ${args} wrote ${n} files (at most 7 come back from a GPU call): ${files}")
  endif()
  if(NOT EXISTS "${out}/summary.md")
    message(FATAL_ERROR "gpu-check.sh ${args} wrote no summary.md: ${files}")
  endif()
  file(READ "${out}/summary.md" s)
  if(NOT s MATCHES "verdict: no device found" OR NOT s MATCHES "nothing was built or measured")
    message(FATAL_ERROR "the summary does not say no device was found:\n${s}")
  endif()
  foreach(f env.txt gpu-check.log)
    if(NOT EXISTS "${out}/${f}")
      message(FATAL_ERROR "gpu-check.sh ${args} wrote no ${f}")
    endif()
  endforeach()
  message(STATUS "${mode}: exit 3 in ${took} s, ${n} files")
endforeach()

# A stand-in nvidia-smi: the name query answers NAME, anything else a line of text.
foreach(device "NVIDIA H200|h200-sxm-141gb" "NVIDIA H900 Prototype|nvidia-h900-prototype")
  string(REPLACE "|" ";" parts "${device}")
  list(GET parts 0 name)
  list(GET parts 1 id)
  set(fake "${DIR}/fake-bin")
  file(REMOVE_RECURSE "${fake}" "${DIR}/fake")
  file(MAKE_DIRECTORY "${fake}")
  file(WRITE "${fake}/nvidia-smi" "#!/bin/sh\ncase \"$*\" in *--format=csv,noheader*) echo '${name}' ;; *) echo 'stand-in nvidia-smi' ;; esac\n")
  file(CHMOD "${fake}/nvidia-smi" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${fake}:$ENV{PATH}" CAPPLAN_GPU_CHECK_BIN=${BIN}
                          CAPPLAN_GPU_CHECK_BUDGET_S=60 bash "${SCRIPT}" --dry-run "${DIR}/fake"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT 90)
  file(READ "${DIR}/fake/summary.md" s)
  if(NOT rc EQUAL 0 OR NOT s MATCHES "device: ${name}" OR NOT s MATCHES "would calibrate into ${id}\\.json \\(\\+ ${id}\\.records\\.json\\)")
    message(FATAL_ERROR "dry run with a stand-in ${name}: exit ${rc} (expected 0 and ${id}.json):\n${s}\n${o}${e}")
  endif()
  file(GLOB files LIST_DIRECTORIES false "${DIR}/fake/*")
  list(LENGTH files n)
  if(n GREATER 7)
    message(FATAL_ERROR "the dry run wrote ${n} files")
  endif()
  message(STATUS "stand-in '${name}': profile ${id}.json, ${n} files")
endforeach()
