# SPDX-License-Identifier: Apache-2.0
# Run as: cmake -DDIR=<folder> -DFORBIDDEN=<regex> -P check_forbidden_includes.cmake
file(GLOB_RECURSE sources "${DIR}/*.hpp" "${DIR}/*.cpp")  # a check script, not a build list
set(violations "")
foreach(src IN LISTS sources)
  file(STRINGS "${src}" hits REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](${FORBIDDEN})")
  foreach(hit IN LISTS hits)
    string(APPEND violations "\n  ${src}: ${hit}")
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "sim/ must stay free of Qt, CUDA, JSON, Eigen and I/O:${violations}")
endif()
message(STATUS "${DIR}: no forbidden includes")
