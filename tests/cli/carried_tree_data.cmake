# SPDX-License-Identifier: Apache-2.0
# A build tree carried with its sources to another machine finds the data/ of the tree it sits in,
# not the absolute source path compiled into it: capplan copied to <tree>/build/x/cli/ beside a
# <tree>/data whose gpus.json names the H100 differently prints that name.
#
#   cmake -DEXE=<capplan> -DDATA=<source data/> -DDIR=<scratch> -P carried_tree_data.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/build/x/cli")
file(COPY "${DATA}/" DESTINATION "${DIR}/data" FILES_MATCHING PATTERN "*.json")
file(READ "${DIR}/data/gpus.json" gpus)
string(REPLACE "\"NVIDIA H100 SXM5 80GB\"" "\"Carried H100 80GB\"" gpus "${gpus}")
file(WRITE "${DIR}/data/gpus.json" "${gpus}")
file(COPY "${EXE}" DESTINATION "${DIR}/build/x/cli")
get_filename_component(name "${EXE}" NAME)
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CAPPLAN_DATA_DIR "${DIR}/build/x/cli/${name}" catalog gpus
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 0 OR NOT o MATCHES "h100-sxm-80gb +Carried H100 80GB")
  message(FATAL_ERROR "the carried capplan did not read its tree's data/ (exit ${rc}):\n${o}\n${e}")
endif()
file(REMOVE_RECURSE "${DIR}")
