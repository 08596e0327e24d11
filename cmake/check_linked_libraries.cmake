# SPDX-License-Identifier: Apache-2.0
# Fails when a program depends on a shared library it must not load: its own NEEDED entries
# (readelf -d) and everything the loader would map for it (ldd, when present), so that a library
# pulled in through another one is caught too.
#
#   cmake -DEXE=<program> "-DFORBIDDEN=<regex on library names>" [-DWHY=<sentence>] -P check_linked_libraries.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT EXE OR NOT FORBIDDEN)
  message(FATAL_ERROR "check_linked_libraries.cmake: EXE and FORBIDDEN are required")
endif()
if(NOT EXISTS "${EXE}")
  message(FATAL_ERROR "check_linked_libraries.cmake: '${EXE}' does not exist")
endif()

find_program(READELF readelf)
find_program(LDD ldd)
if(NOT READELF)
  message(FATAL_ERROR "check_linked_libraries.cmake: readelf (binutils) is needed")
endif()

execute_process(COMMAND "${READELF}" -d "${EXE}" RESULT_VARIABLE rc OUTPUT_VARIABLE dynamic ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d '${EXE}' failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]+\\]" needed_lines "${dynamic}")
set(needed "")
foreach(line IN LISTS needed_lines)
  string(REGEX REPLACE ".*\\[([^]]+)\\].*" "\\1" lib "${line}")
  list(APPEND needed "${lib}")
endforeach()

set(loaded "")
if(LDD)
  execute_process(COMMAND "${LDD}" "${EXE}" RESULT_VARIABLE rc OUTPUT_VARIABLE ldd_out ERROR_QUIET)
  if(rc EQUAL 0)
    string(REGEX MATCHALL "(^|\n)[ \t]*[^ \t\n]+" names "${ldd_out}")
    foreach(name IN LISTS names)
      string(STRIP "${name}" name)
      get_filename_component(name "${name}" NAME)
      list(APPEND loaded "${name}")
    endforeach()
  endif()
endif()

set(violations "")
foreach(lib IN LISTS needed loaded)
  if(lib MATCHES "${FORBIDDEN}")
    list(APPEND violations "${lib}")
  endif()
endforeach()
list(REMOVE_DUPLICATES violations)
if(violations)
  list(JOIN violations ", " text)
  message(FATAL_ERROR "${EXE} loads ${text}. ${WHY}")
endif()
list(JOIN needed ", " text)
message(STATUS "${EXE}: NEEDED ${text}; none matches ${FORBIDDEN}")
