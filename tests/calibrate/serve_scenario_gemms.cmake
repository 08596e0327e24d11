# SPDX-License-Identifier: Apache-2.0
# calibrate --for-scenario on a serve scenario measures its passes' GEMMs.
#   cmake -DEXE=<capplan> -DDIR=<scratch> -DSCENARIO=<serve scenario> -P serve_scenario_gemms.cmake
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(COMMAND "${EXE}" calibrate --backend host --quick --for-scenario "${SCENARIO}" --out "${DIR}/p.json"
                        --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate exited ${rc}\n${out}\n${err}")
endif()
file(READ "${DIR}/p.records.json" records)
# The decode attention of 16 sequences (max_num_seqs) over 225 cached tokens (200 in + 50 out / 2):
# per KV head (2 of them) the 2-query group against 64-wide keys, in bf16 (sorted keys: batch ... n).
if(NOT records MATCHES "\"batch\": 32,[^}]*\"dtype\": \"bf16\",[^}]*\"k\": 64,[^}]*\"m\": 2,[^}]*\"n\": 225,")
  message(FATAL_ERROR "the records lack the decode attention GEMM 2 x 225 x 64, batch 32, bf16")
endif()
# The prefill chunk's linears: 256 tokens (max_num_batched_tokens) against the 256-wide QKV weight.
if(NOT records MATCHES "\"batch\": 1,[^}]*\"dtype\": \"bf16\",[^}]*\"k\": 256,[^}]*\"m\": 256,")
  message(FATAL_ERROR "the records lack the prefill chunk's 256-token linears")
endif()
