# SPDX-License-Identifier: Apache-2.0
# capplan-gui --profile FILE prices the estimate exactly as capplan estimate --profile FILE: the
# JSON export of the built-in example is byte for byte the CLI's (cost model, numbers, the
# profile's coverage warnings); a bad profile exits 2 with the CLI's message naming the field.
set(json "${DIR}/export_profile_estimate.json")
file(REMOVE "${json}")
execute_process(COMMAND "${EXE}" --profile "${PROFILE}" --screenshot "${DIR}/export_profile_window.png"
                        --export-results "${json}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "capplan-gui --profile exited with ${rc}: ${err}")
endif()
execute_process(COMMAND "${CLI}" estimate --profile "${PROFILE}" --format json OUTPUT_VARIABLE cli_json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "capplan estimate --profile failed (${rc})")
endif()
file(READ "${json}" gui_json)
if(NOT gui_json STREQUAL cli_json)
  message(FATAL_ERROR "the GUI's JSON export with a profile differs from capplan estimate --profile:\n${gui_json}\n---\n${cli_json}")
endif()
if(NOT gui_json MATCHES "\"cost_model\": \"calibrated: synthetic H100")
  message(FATAL_ERROR "the export does not name the calibrated cost model")
endif()
execute_process(COMMAND "${EXE}" --profile "${BAD_PROFILE}" --screenshot "${DIR}/export_profile_bad.png"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "bad-peak-profile.json#/gemm/0/peak_flops_per_s/value: must be > 0; got -1")
  message(FATAL_ERROR "a bad profile: expected exit 2 naming the field, got ${rc}: ${err}")
endif()
