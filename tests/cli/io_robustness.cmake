# SPDX-License-Identifier: Apache-2.0
# Output files, standard output and input size and encoding (included by tests/cli/CMakeLists.txt,
# which defines capplan_cli_test, S and OUT). Generated inputs are written at configure time under ${IO}.
set(IO ${CMAKE_CURRENT_BINARY_DIR}/io)
file(MAKE_DIRECTORY ${IO})
set(TEXT ${PROJECT_SOURCE_DIR}/tests/fixtures/text)

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
