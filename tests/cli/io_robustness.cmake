# SPDX-License-Identifier: Apache-2.0
# Output files, standard output and input size and encoding (included by tests/cli/CMakeLists.txt,
# which defines capplan_cli_test, S and OUT). Generated inputs are written at configure time under ${IO}.
set(IO ${CMAKE_CURRENT_BINARY_DIR}/io)
file(MAKE_DIRECTORY ${IO})
set(TEXT ${PROJECT_SOURCE_DIR}/tests/fixtures/text)

# --out: through links, keeping the mode, refusing read-only files and an empty name; the same
# writer for every command that has --out.
set(out_commands
    "estimate|${S}/llama3_8b_h100.json|--format|json"
    "catalog|gpus|--format|json"
    "tco|${S}/tencent_h800_tco.json|--format|json"
    "serve|--curve-points|0|--format|json"
    "validate-serving|${PROJECT_SOURCE_DIR}/tests/fixtures/serving/serving_runs_small.csv|--format|json")
set(out_names estimate catalog tco serve validate_serving)
foreach(i RANGE 4)
  list(GET out_commands ${i} command)
  list(GET out_names ${i} name)
  string(REPLACE "|" ";" command "${command}")
  add_test(NAME cli.out_${name}_writes_through_links_keeps_mode_refuses_read_only
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/out_file_semantics.sh $<TARGET_FILE:capplan> ${command})
  set_tests_properties(cli.out_${name}_writes_through_links_keeps_mode_refuses_read_only PROPERTIES LABELS "cli")
endforeach()
# An empty file name (an empty argument, which capplan_cli_test's ARGS cannot carry) is exit 2 naming the flag.
function(empty_name_test name flag)
  add_test(NAME cli.${name}
           COMMAND sh -c "err=$(\"$0\" \"$@\" ${flag} '' 2>&1); rc=$?; echo \"$err\"; \
[ $rc -eq 2 ] && echo \"$err\" | grep -q -- '${flag}: must name a file'" $<TARGET_FILE:capplan> ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES LABELS "cli")
endfunction()
empty_name_test(calibrate_out_empty_exits_2 --out calibrate --from-runs ${PROJECT_SOURCE_DIR}/examples/from-runs/runs.json)
empty_name_test(write_error_bands_empty_exits_2 --write-error-bands validate-published --format json)

# Every output file is checked before any work: nothing on standard output.
capplan_cli_test(write_error_bands_in_missing_folder_exits_2_before_the_report
                 ARGS validate-published --format json --write-error-bands ${IO}/no-such-folder/b.json RC 2
                 STDERR "capplan: error: --write-error-bands '${IO}/no-such-folder/b.json': folder '${IO}/no-such-folder' does not exist"
                 STDOUT_NOT ".")

# A file size limit on standard output (ulimit -f) is a write error, not a kill by SIGXFSZ.
add_test(NAME cli.stdout_past_file_size_limit_exits_1
         COMMAND bash -c "d=$(mktemp -d); ulimit -f 1; \"$0\" catalog models --format json > $d/out.json 2> $d/err; rc=$?; \
grep -q 'capplan: error: cannot write to standard output: File too large' $d/err; found=$?; rm -rf $d; \
[ $rc -eq 1 ] && [ $found -eq 0 ]" $<TARGET_FILE:capplan>)
set_tests_properties(cli.stdout_past_file_size_limit_exits_1 PROPERTIES LABELS "cli")

# A memory gate on a table where no row measures peak memory cannot be checked: exit 2 naming it.
capplan_cli_test(max_memory_mape_without_memory_rows_exits_2
                 ARGS validate-published --format json --max-memory-mape 1000000 RC 2
                 STDERR "capplan: error: --max-memory-mape 1000000.00: no row of '.*' measures peak memory"
                 STDERR_NOT "n/a")

# Every CSV is UTF-8 text: anything else is exit 2 naming the file, the line and the column.
capplan_cli_test(published_runs_not_utf8_exits_2 ARGS validate-published ${TEXT}/published_row_not_utf8.csv --format json
                 RC 2 STDERR "capplan: error: published_row_not_utf8.csv:2: column [0-9]+ \\([a-z_]+\\): not UTF-8 text \\(byte 0xFF")
capplan_cli_test(serving_runs_not_utf8_exits_2 ARGS validate-serving ${TEXT}/serving_row_not_utf8.csv --format table
                 RC 2 STDERR "capplan: error: serving_row_not_utf8.csv:2: column 8 \\(model\\): not UTF-8 text \\(byte 0xFF at byte 13")
capplan_cli_test(from_runs_csv_not_utf8_exits_2 ARGS calibrate --from-runs ${TEXT}/runs_not_utf8.csv --out ${IO}/p.json
                 RC 2 STDERR "capplan: error: runs_not_utf8.csv:2: column 1 \\(label\\): not UTF-8 text \\(byte 0xFF at byte 5")

# A serving row's num_requests is capped like serve's traffic.requests (every request is simulated).
capplan_cli_test(serving_num_requests_above_cap_exits_2 ARGS validate-serving ${TEXT}/serving_too_many_requests.csv --format json
                 RC 2 STDERR "column num_requests: expected a positive whole number up to 1000000 .*; got '10000000'")

# JSON input is linear in the members of one object or array: 40,000 object children (0.5 MB)
# and 200,000 array elements are rejected at once for the unknown field, as any small file is.
set(members "")
foreach(i RANGE 39999)
  string(APPEND members "\"k${i}\":{},")
endforeach()
file(WRITE ${IO}/wide_object.json "{\"x\":{${members}\"k\":{}}}")
string(REPEAT "{}," 199999 elements)
file(WRITE ${IO}/wide_array.json "{\"x\":[${elements}{}]}")
foreach(kind object array)
  capplan_cli_test(wide_${kind}_scenario_fails_on_its_unknown_field ARGS estimate ${IO}/wide_${kind}.json RC 2
                   STDERR "scenario#/x: unknown")
  capplan_cli_test(wide_${kind}_profile_fails_on_its_unknown_field ARGS estimate ${S}/llama3_8b_h100.json
                   --profile ${IO}/wide_${kind}.json RC 2 STDERR "wide_${kind}.json#")
  capplan_cli_test(wide_${kind}_serve_fails_on_its_unknown_field ARGS serve ${IO}/wide_${kind}.json RC 2
                   STDERR "#/x: unknown")
  capplan_cli_test(wide_${kind}_runs_fail_on_their_unknown_field ARGS calibrate --from-runs ${IO}/wide_${kind}.json
                   --out ${IO}/p.json RC 2 STDERR "wide_${kind}.json#")
endforeach()
