#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Whole-process cost of one `capplan estimate --format json` of a fixed layout (Llama-2-70B on 64
# p4d nodes, tp 8 pp 4 dp 16): the median, min and max wall time of N runs (started from bash, so
# exec, dynamic loading, static initialisers, catalog parsing and exit are all in it), the CPU time
# per run (user + sys, which is what the wall time is on an idle core) and the largest
# max-resident-set size (/usr/bin/time %M) over N more runs. Targets: a median
# of at most 20 ms wall and at most 30 MB resident.
#
#   scripts/bench-cli.sh [CAPPLAN] [N]     default: build/release/cli/capplan, 20 runs
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-${repo}/build/release/cli/capplan}"
runs="${2:-20}"
scenario="${repo}/tests/cli/scenarios/llama2_70b_p4d.json"
args=(estimate "${scenario}" --format json)

if [[ ! -x "${exe}" ]]; then
  echo "bench-cli.sh: '${exe}' is not an executable; build first (cmake --build --preset release)" >&2
  exit 2
fi
if ! "${exe}" "${args[@]}" >/dev/null; then
  echo "bench-cli.sh: '${exe} ${args[*]}' failed" >&2
  exit 1
fi
"${exe}" "${args[@]}" >/dev/null  # second warm-up: files in the page cache

# The children's user + sys CPU time so far (bash's `times`, second line), in microseconds. `times`
# runs in this shell (a redirection, not a command substitution, whose subshell has no children).
times_file="$(mktemp)"
trap 'rm -f "${times_file}"' EXIT
children_cpu_us() {
  local user sys
  times >"${times_file}"
  read -r user sys < <(tail -n 1 "${times_file}")
  cpu_now_us=$(($(to_us "${user}") + $(to_us "${sys}")))
}
to_us() {  # "0m0.230s" -> 230000
  local m=${1%%m*} s=${1#*m}
  s=${s%s}
  local whole=${s%.*} frac=${s#*.}
  frac="${frac}000000"
  echo $(((10#${m} * 60 + 10#${whole}) * 1000000 + 10#${frac:0:6}))
}

children_cpu_us
cpu0=${cpu_now_us}
wall_us=()
for ((i = 0; i < runs; ++i)); do
  t0=${EPOCHREALTIME/./}
  "${exe}" "${args[@]}" >/dev/null
  t1=${EPOCHREALTIME/./}
  wall_us+=($((t1 - t0)))
done
children_cpu_us
cpu_us=$(((cpu_now_us - cpu0) / runs))
mapfile -t sorted < <(printf '%s\n' "${wall_us[@]}" | sort -n)
if ((runs % 2 == 1)); then
  median_us=${sorted[runs / 2]}
else
  median_us=$(((sorted[runs / 2 - 1] + sorted[runs / 2]) / 2))
fi

max_kib=0
if [[ -x /usr/bin/time ]]; then
  rss_file="$(mktemp)"
  trap 'rm -f "${rss_file}" "${times_file}"' EXIT
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -f %M -o "${rss_file}" "${exe}" "${args[@]}" >/dev/null
    kib=$(tail -n 1 "${rss_file}")
    ((kib > max_kib)) && max_kib=${kib}
  done
fi

ms() { printf '%d.%02d' $(($1 / 1000)) $((($1 % 1000) / 10)); }
echo "capplan estimate ${scenario#"${repo}/"} --format json (${exe})"
echo "  wall, ${runs} runs: median $(ms "${median_us}") ms (min $(ms "${sorted[0]}"), max $(ms "${sorted[runs - 1]}"))"
echo "  cpu (user + sys) per run: $(ms "${cpu_us}") ms (what the wall time approaches on an idle core)"
if ((max_kib > 0)); then
  echo "  max RSS, ${runs} runs: $((max_kib / 1024)).$(((max_kib % 1024) * 10 / 1024)) MiB (${max_kib} KiB)"
else
  echo "  max RSS: not measured (/usr/bin/time is missing)"
fi
