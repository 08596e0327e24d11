#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every CLI answer of every shipped example and CLI test scenario, written to one folder, so that a
# change meant to keep behaviour (a refactor) can be checked byte for byte against the build
# before it.
#
#   scripts/output-snapshot.sh OUTDIR [CAPPLAN]     write the snapshot (CAPPLAN default:
#                                                   build/release/cli/capplan)
#   scripts/output-snapshot.sh --compare A B        compare two snapshots; exit 1 and list every
#                                                   file that differs
#
# For each scenario: `estimate` as table, JSON and CSV; `search`, `tco` and, for serving
# scenarios, `serve` as JSON and table, comparing layouts, and across Tencent's offerings and two
# engines; each answer's exit code and stderr are kept beside its
# stdout (an invalid scenario's error is an answer too). Searches run with --threads 1 so their
# output does not depend on the machine. The example catalogs and price sheets are the shipped
# ones; nothing is fetched.
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ "${1:-}" == "--compare" ]]; then
  [[ $# -eq 3 ]] || { echo "usage: $0 --compare A B" >&2; exit 2; }
  if diff -r -q "$2" "$3"; then
    echo "identical: $(find "$2" -type f | wc -l) answers"
    exit 0
  fi
  echo "differ (diff -r $2 $3 shows how)"
  exit 1
fi
[[ $# -ge 1 && $# -le 2 && "$1" != -* ]] || { echo "usage: $0 OUTDIR [CAPPLAN] | $0 --compare A B" >&2; exit 2; }
out="$1"
capplan="${2:-${repo_root}/build/release/cli/capplan}"
[[ -x "${capplan}" ]] || { echo "$0: ${capplan}: not an executable (build first)" >&2; exit 2; }
mkdir -p "${out}" || exit 2

# answer NAME ARGS...: stdout, stderr and the exit code of `capplan ARGS...`, run from the
# repository root (scenarios name files relative to it). Absolute paths in the output (the
# repository's, the output folder's) are written as <repo> and <out>, and the wall time a search
# reports as <seconds>.
answer() {
  local name="$1"
  shift
  local rc
  (cd "${repo_root}" && timeout 300 "${capplan}" "$@" >"${out}/${name}.out" 2>"${out}/${name}.err")
  rc=$?
  echo "${rc}" >"${out}/${name}.rc"
  sed -i -E "s#${repo_root}#<repo>#g; s#${out}#<out>#g; s#\"elapsed_s\": [0-9.e+-]+#\"elapsed_s\": <seconds>#g; s#in [0-9.]+ s with#in <seconds> s with#g" \
    "${out}/${name}.out" "${out}/${name}.err"
}

scenarios=()
while IFS= read -r f; do scenarios+=("${f#"${repo_root}"/}"); done < <(
  find "${repo_root}/examples" "${repo_root}/tests/cli/scenarios" -name '*.json' |
    grep -v -E '/(prices|runs|profile)\.json$|/from-runs/' | sort)
n=0
for s in "${scenarios[@]}"; do
  key=$(echo "${s%.json}" | tr '/' '_')
  if grep -q '"serve"' "${repo_root}/${s}" && grep -q '"kind"' "${repo_root}/${s}"; then
    answer "${key}.serve.json" serve "${s}" --format json
    answer "${key}.serve.table" serve "${s}" --format table
    answer "${key}.serve-compare.json" serve "${s}" --format json --compare true
    answer "${key}.serve-offerings.table" serve "${s}" --format table --instances 'tencent-*' --engines vllm,sglang
    answer "${key}.serve-70b.json" serve "${s}" --format json --model llama3-70b
  fi
  answer "${key}.estimate.table" estimate "${s}" --format table
  answer "${key}.estimate.json" estimate "${s}" --format json
  answer "${key}.estimate.csv" estimate "${s}" --format csv
  if grep -q '"tco"' "${repo_root}/${s}"; then
    answer "${key}.tco.json" tco "${s}" --format json
  else
    answer "${key}.tco.json" tco "${s}" --format json --years 3 --utilisation 0.6
  fi
  if [[ "${s}" == *search* || "${s}" == examples/* ]]; then
    answer "${key}.search.json" search "${s}" --format json --threads 1
    answer "${key}.search.table" search "${s}" --format table --threads 1
  fi
  n=$((n + 1))
done
# The built-in example and the catalogs.
answer "builtin.estimate.table" estimate --format table
answer "builtin.estimate.json" estimate --format json
for what in gpus instances models storage frameworks engines; do
  answer "catalog.${what}.json" catalog "${what}" --format json
done
echo "${n} scenarios, $(find "${out}" -name '*.rc' | wc -l) answers in ${out}"
