#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the libFuzzer targets of fuzz/ (README "Fuzzing"), each for SECONDS (default 60), one after
# the other, from the shipped files (seeds) and fuzz/corpus/<target>/ (inputs worth keeping, each
# crash found so far). Builds them first with the fuzz preset (Clang 16). Exit 1 when a target
# crashes, leaks, trips UBSan, exceeds the time or memory limit per input, or breaks an invariant;
# the input is then build/fuzz/artifacts/<target>-crash-<sha1> (reproduce: build/fuzz/fuzz/<target>
# FILE). Corpora grow in build/fuzz/corpus/<target>/ and are reused by the next run.
#   fuzz/run.sh                     # every target, 60 s each (CI: --time 30)
#   fuzz/run.sh --time 3600 scenario profile   # long runs of some targets
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
targets=()
while (($#)); do
  case "$1" in
    --time) seconds="$2"; shift 2 ;;
    -h|--help) sed -n '3,12p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

# The shipped files each target starts from.
seeds() {
  case "$1" in
    json_reader) ls tests/cli/scenarios/*.json examples/*/*.json tests/fixtures/calibrate/*profile*.json ;;
    scenario) ls tests/cli/scenarios/*.json examples/*/scenario.json examples/from-runs/*-h800.json ;;
    profile) ls examples/from-runs/profile.json tests/fixtures/calibrate/*profile*.json ;;
    records) ls tests/fixtures/calibrate/*.records.json ;;
    published_runs) ls tests/fixtures/data/runs_quoted.csv ;;  # and fuzz/corpus: the shipped table's rows
    price_sheet) ls examples/*/prices.json data/price-sheets/*.json ;;
    runs) ls examples/from-runs/runs.json tests/cli/scenarios/bad_runs.json ;;
    serving_runs) ls tests/fixtures/serving/*.csv ;;  # and fuzz/corpus: rows of the shipped table
    catalog_*) ls "data/${1#catalog_}.json" tests/fixtures/data/*/"${1#catalog_}.json" 2>/dev/null || true ;;
  esac
}

# Wide JSON seeds for the JSON targets: one object with thousands of object members and one array
# of thousands of objects, as large as -max_len keeps (64 KiB). Reading them must stay linear in
# the members (a reader that walks the parent at each member took seconds at this size and
# minutes at a few MB).
wide_json_seeds() {
  python3 - "$1" <<'PY'
import sys
d = sys.argv[1]
n = 6000  # '"k12345":{},' is at most 12 bytes: 6,000 members fit in 64 KiB
open(d + "/wide_object.json", "w").write('{"x":{' + ",".join('"k%d":{}' % i for i in range(n)) + "}}")
open(d + "/wide_array.json", "w").write('{"x":[' + ",".join("{}" for _ in range(21000)) + "]}")
PY
}

cmake --preset fuzz >/dev/null
if ((${#targets[@]})); then
  cmake --build --preset fuzz -j "${CAPPLAN_FUZZ_JOBS:-2}" --target $(printf 'fuzz_%s ' "${targets[@]}")
else
  # Every target fuzz/CMakeLists.txt declares.
  cmake --build --preset fuzz -j "${CAPPLAN_FUZZ_JOBS:-2}"
  for bin in build/fuzz/fuzz/fuzz_*; do targets+=("${bin#build/fuzz/fuzz/fuzz_}"); done
fi
mkdir -p build/fuzz/artifacts
# Leaks are errors; a UBSan report stops the run (the preset builds with -fno-sanitize-recover).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Stack traces with function names and lines (llvm-symbolizer comes with clang-14 on Debian 12).
symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
[[ -z "$symbolizer" ]] || export ASAN_SYMBOLIZER_PATH="$symbolizer"
failed=()
for t in "${targets[@]}"; do
  corpus="build/fuzz/corpus/$t" seed_dir="build/fuzz/seeds/$t"
  rm -rf "$seed_dir"
  mkdir -p "$corpus" "$seed_dir" "fuzz/corpus/$t"
  for f in $(seeds "$t"); do cp "$f" "$seed_dir/$(echo "$f" | tr / _)"; done
  case "$t" in json_reader|scenario|profile|records|price_sheet|runs|catalog_*) wide_json_seeds "$seed_dir" ;; esac
  log="build/fuzz/$t.log"
  echo "capplan fuzz: $t for ${seconds} s (log: $log)"
  # -timeout: an input that takes 10 s is a bug (the quadratic duplicate-key check took 65 s);
  # -rss_limit_mb: 2 GiB, far above what any parser needs for a 64 MiB input.
  if build/fuzz/fuzz/"fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -dict="fuzz/dict/$t.dict" -artifact_prefix="build/fuzz/artifacts/$t-" -print_final_stats=1 \
       "$corpus" "$seed_dir" "fuzz/corpus/$t" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    echo "capplan fuzz: $t ok: ${execs:-?} executions, ${rate:-?}/s, corpus $(ls "$corpus" | wc -l) inputs"
  else
    echo "capplan fuzz: $t FAILED; the end of $log:"
    tail -n 40 "$log"
    failed+=("$t")
  fi
done
if ((${#failed[@]})); then
  echo "capplan fuzz: failed: ${failed[*]} (inputs in build/fuzz/artifacts/)"
  exit 1
fi
