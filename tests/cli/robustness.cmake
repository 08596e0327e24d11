# SPDX-License-Identifier: Apache-2.0
# Malformed and hostile inputs through the real binary (included by tests/cli/CMakeLists.txt, which
# defines capplan_cli_test, S and OUT). Inputs too large or too odd to commit are written at
# configure time under ${G}.
set(G ${CMAKE_CURRENT_BINARY_DIR}/robustness_inputs)
file(MAKE_DIRECTORY ${G})

# 100,000 nested lists on stdin: refused with exit 2, not a crash (SIGSEGV, exit 139).
string(REPEAT "[" 100000 open)
string(REPEAT "]" 100000 close)
file(WRITE ${G}/deep.json "${open}${close}")
capplan_cli_test(robustness_deep_nesting_on_stdin_exits_2 ARGS estimate - INPUT ${G}/deep.json RC 2
                 STDERR "capplan: error: scenario: invalid JSON: nested deeper than 256 levels at byte offset 256")

# /dev/zero: not read without bound (which would end in bad_alloc, exit 1). A device is refused
# before reading, a profile or price sheet too; standard input and pipes are read up to 64 MiB.
capplan_cli_test(robustness_dev_zero_scenario_is_refused ARGS estimate /dev/zero RC 2
                 STDERR "capplan: error: scenario file '/dev/zero': a device, not a file")
capplan_cli_test(robustness_dev_zero_profile_is_refused ARGS estimate ${S}/llama3_8b_h100.json --profile /dev/zero RC 2
                 STDERR "capplan: error: profile file '/dev/zero': a device, not a file")
capplan_cli_test(robustness_dev_zero_price_sheet_is_refused ARGS estimate ${S}/llama3_8b_h100.json --prices /dev/zero RC 2
                 STDERR "capplan: error: .*'/dev/zero': a device, not a file")
# (validate-published refuses it as not a regular file.)
capplan_cli_test(robustness_dev_zero_published_runs_are_refused ARGS validate-published /dev/zero RC 2
                 STDERR "capplan: error: published runs '/dev/zero': not a regular file")

# Denormals do not pass "> 0" (they would give exit 0 with step_time_s and the time to train null).
file(WRITE ${G}/denormal_bandwidth.json [=[{
  "model":    { "preset": "llama3-8b" },
  "training": { "tokens": "1T", "global_batch_tokens": 4194304, "precision": "bf16" },
  "cluster":  { "gpu": "h100-sxm-80gb", "gpus": 64, "inter_node_gbps_per_gpu": 5e-324 },
  "strategy": { "tp": 8, "pp": 1 }
}]=])
capplan_cli_test(robustness_denormal_bandwidth_exits_2 ARGS estimate ${G}/denormal_bandwidth.json RC 2
                 STDERR "capplan: error: scenario#/cluster/inter_node_gbps_per_gpu: must be at least 1e-15 \\(a positive value this small is no physical quantity\\); got 5e-324")
file(WRITE ${G}/denormal_batch.json [=[{
  "model":    { "preset": "llama3-8b" },
  "training": { "tokens": "1T", "global_batch_tokens": 5e-324, "precision": "bf16" },
  "cluster":  { "gpu": "h100-sxm-80gb", "gpus": 64 },
  "strategy": { "tp": 8, "pp": 1 }
}]=])
capplan_cli_test(robustness_denormal_global_batch_tokens_exits_2 ARGS estimate ${G}/denormal_batch.json RC 2
                 STDERR "capplan: error: scenario#/training/global_batch_tokens: must be at least 1 \\(a number of tokens\\); got 5e-324")
capplan_cli_test(robustness_denormal_intra_node_flag_exits_2
                 ARGS estimate ${S}/llama3_8b_h100.json --intra-node-gbps 1e-300 RC 2
                 STDERR "scenario#/cluster/intra_node_gbps: must be at least 1e-15 .*; got 1e-300 \\(set by --intra-node-gbps\\)")
capplan_cli_test(robustness_slow_link_flag_exits_2
                 ARGS estimate ${S}/llama3_8b_h100.json --inter-node-gbps-per-gpu 0.0001 RC 2
                 STDERR "scenario#/cluster/inter_node_gbps_per_gpu: must be at least 0.001 \\(1 Mbit/s: a slower link is no GPU interconnect\\); got 0.0001 \\(set by --inter-node-gbps-per-gpu\\)")

# A collective latency_s of 1e308 is refused (it would give exit 0 with step_time_s null).
file(READ ${PROJECT_SOURCE_DIR}/tests/fixtures/calibrate/synthetic-h100-profile.json profile)
string(JSON profile SET "${profile}" collectives 0 latency_s value "1e308")
file(WRITE ${G}/absurd-latency-profile.json "${profile}")
capplan_cli_test(robustness_absurd_profile_latency_exits_2
                 ARGS estimate ${S}/llama3_8b_h100.json --profile ${G}/absurd-latency-profile.json RC 2
                 STDERR "capplan: error: .*#/collectives/0/latency_s/value: must be at most 10; got 1e\\+308")

# Output failures are not ignored: `> /dev/full` or a closed stdout does not exit 0.
set(robustness_output_commands
    "estimate|${S}/llama3_8b_h100.json|--format|json"
    "search|${S}/search_llama2_7b_no_cluster.json|--instances|aws-p5.48xlarge|--nodes|1|--top|1|--format|json"
    "validate-published|--format|json"
    "catalog|gpus"
    "tco|${S}/tencent_h800_tco.json|--format|json")
set(robustness_output_names estimate search validate_published catalog tco)
foreach(how full closed)
  foreach(i RANGE 4)
    list(GET robustness_output_commands ${i} command)
    list(GET robustness_output_names ${i} name)
    add_test(NAME cli.robustness_${name}_stdout_${how}_exits_1
             COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:capplan> "-DARGS=${command}" -DHOW=${how}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/output_failure.cmake)
    set_tests_properties(cli.robustness_${name}_stdout_${how}_exits_1 PROPERTIES LABELS "cli")
  endforeach()
endforeach()

# A 255-character file name works (the temporary name stays within NAME_MAX); calibrate
# --out /dev/full or --out DIR measured everything and then exited 1. Both are refused up front
# (exit 2, nothing measured: the refusal comes before the backend opens, so no "calibrate:" lines).
string(REPEAT "a" 250 long_name)
capplan_cli_test(robustness_out_with_a_255_character_name
                 ARGS estimate ${S}/llama3_8b_h100.json --out ${OUT}/long_name/${long_name}.json
                 OUT_FILE ${OUT}/long_name/${long_name}.json OUT_FILE_REGEX "^{.*\"step_time_s\"")
# (calibrate --out /dev/full: tests/cli/CMakeLists.txt's calibrate_out_to_a_device_exits_2_before_measuring.)
capplan_cli_test(robustness_calibrate_out_directory_is_refused_up_front
                 ARGS calibrate --backend host --quick --out ${G} RC 2
                 STDERR "^capplan: error: --out '.*robustness_inputs': is a directory")
capplan_cli_test(robustness_estimate_out_directory_is_refused
                 ARGS estimate ${S}/llama3_8b_h100.json --out ${G} RC 2
                 STDERR "capplan: error: --out '.*robustness_inputs': is a directory" STDOUT_NOT ".")

# Error amplification. 10,000 unknown keys (100k would print 26 MB unbounded): the first 20
# are printed, then the count of the rest. A 1 MB preset name is cut in the message and gets no
# edit distance (a 10 MB one cost 6 s and 10 MB of stderr).
set(keys "")
foreach(i RANGE 99)
  foreach(j RANGE 99)
    string(APPEND keys "\"unknown_${i}_${j}\": 1, ")
  endforeach()
endforeach()
file(WRITE ${G}/many_unknown_keys.json "{ ${keys} \"model\": { \"preset\": \"llama3-8b\" } }")
capplan_cli_test(robustness_many_unknown_keys_print_twenty_and_a_count ARGS estimate ${G}/many_unknown_keys.json RC 2
                 STDERR "^(capplan: error: scenario#/[^\n]*\n)+capplan: error: \\.\\.\\. and [0-9]+ more \\(the first 20 are shown\\)\n$")
string(REPEAT "x" 1000000 huge_name)
file(WRITE ${G}/huge_preset_name.json "{ \"model\": { \"preset\": \"${huge_name}\" } }")
capplan_cli_test(robustness_huge_preset_name_is_cut ARGS estimate ${G}/huge_preset_name.json RC 2
                 STDERR "scenario#/model/preset: unknown model preset 'xxxx[x]*\\.\\.\\. \\([0-9]+ more characters\\)")

# Points 9 and 14: the published-runs reader. The dev CSV's header and first row (R003, whose
# network cell is "Selene: 8x200 Gb/s HDR InfiniBand per node ..."), with that cell mutated.
file(STRINGS ${PROJECT_SOURCE_DIR}/data/benchmarks/published_runs_dev.csv csv_lines LIMIT_COUNT 2)
list(GET csv_lines 0 csv_header)
list(GET csv_lines 1 csv_row)
string(REPEAT "0" 400 zeros)
string(REPLACE "8x200 Gb/s HDR" "1${zeros} x 200 Gb/s HDR" row_overflow "${csv_row}")
file(WRITE ${G}/runs_overflow.csv "${csv_header}\n${row_overflow}\n")
# stod overflowed: "internal error", exit 1.
capplan_cli_test(robustness_published_runs_number_overflow_exits_2 ARGS validate-published ${G}/runs_overflow.csv RC 2
                 STDERR "capplan: error: runs_overflow.csv:2: column 'inter_node_network': number out of range"
                 STDERR_NOT "internal error")
string(REPEAT "a" 50000 letters)
string(REPLACE "8x200 Gb/s HDR" "8 x ${letters} NDR" row_long "${csv_row}")
file(WRITE ${G}/runs_long_cell.csv "${csv_header}\n${row_long}\n")
# std::regex recursed per character: SIGSEGV.
capplan_cli_test(robustness_published_runs_long_cell_exits_2 ARGS validate-published ${G}/runs_long_cell.csv RC 2
                 STDERR "capplan: error: runs_long_cell.csv:2: field [0-9]+ is longer than 1024 characters")
