# SPDX-License-Identifier: Apache-2.0
# capplan-gui --tab serve --export-serve/--export-serve-charts against capplan serve.
set(json "${DIR}/export_serve.json")
file(REMOVE "${json}" "${DIR}/export_serve_chart-curve.png" "${DIR}/export_serve_chart-layouts.png"
     "${DIR}/export_serve_chart-pareto.png" "${DIR}/export_serve_chart-lifecycle.png")
execute_process(COMMAND "${EXE}" --screenshot "${DIR}/export_serve_window.png" --tab serve --serve-scenario "${SCENARIO}"
                        --export-serve "${json}" --export-serve-charts "${DIR}/export_serve_chart.png"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "capplan-gui exited with ${rc}: ${err}")
endif()
execute_process(COMMAND "${CLI}" serve "${SCENARIO}" --format json OUTPUT_VARIABLE cli_json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "capplan serve failed")
endif()
file(READ "${json}" gui_json)
if(NOT gui_json STREQUAL cli_json)
  message(FATAL_ERROR "the Serve tab's JSON export differs from capplan serve --format json:\n${gui_json}\n---\n${cli_json}")
endif()
foreach(f curve layouts pareto lifecycle)
  set(png "${DIR}/export_serve_chart-${f}.png")
  if(NOT EXISTS "${png}")
    message(FATAL_ERROR "chart export ${png} missing")
  endif()
  file(SIZE "${png}" size)
  if(size LESS 2000)
    message(FATAL_ERROR "chart export ${png} is implausibly small (${size} bytes)")
  endif()
endforeach()
# A serve scenario the CLI refuses: the GUI exits 2 with the CLI's message.
execute_process(COMMAND "${EXE}" --screenshot "${DIR}/export_serve_bad.png" --tab serve
                        --serve-scenario "${SCENARIO}.does-not-exist"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "capplan-gui on a missing serve scenario exited with ${rc}, not 2: ${err}")
endif()
