#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CUDA calibration of one GPU machine in one short call: detect the GPU, use binaries built
# elsewhere when they load here (build on the machine only when they do not), smoke-test them,
# calibrate, validate the measured training steps against the profile, then run the GPU unit
# tests. Written for a bare machine with an NVIDIA GPU, the CUDA toolkit, CMake and a Python with
# NVIDIA's wheels (NCCL perhaps only as the wheel nvidia-nccl-cu13), and no network or MPI.
#
#   scripts/gpu-check.sh --stage          on a Debian 12 build machine: build the `gpu-carry` preset
#                                         (capplan, capplan-calibrate and the GPU tests, CUDA backend
#                                         for sm_90, no MPI, static C++ runtime), copy the three
#                                         programs to build/carry (17 MB), and the header-only
#                                         dependencies and GoogleTest's sources to .deps (14 MB) for
#                                         a build on the GPU machine should the programs not load
#                                         there; both git-ignored: carry them with the tree, e.g.
#                                         the device tool's carry ["build/carry", ".deps"]
#   scripts/gpu-check.sh OUTDIR           on the GPU machine: the whole check, results in OUTDIR
#   scripts/gpu-check.sh --dry-run OUTDIR everything but building and measuring: the environment,
#                                         the device, the binaries' libraries, the plan; on a machine
#                                         without a GPU it ends within seconds saying so
#   scripts/gpu-check.sh --check-carry [BINDIR]
#                                         the carried binaries' libraries: with LD_LIBRARY_PATH set
#                                         as on the GPU machine, every one resolves (ldd), and none
#                                         but the CUDA libraries and the C library's own is needed
#
# OUTDIR receives at most 7 files, each written as its phase ends (a run stopped by a time limit
# keeps what it did): summary.md (rewritten after every phase), env.txt, gpu-check.log,
# <gpu>.json (the profile, named after the catalog id of the detected GPU, e.g. h200-sxm-141gb;
# partial when the sweep was cut off), <gpu>.records.json (every measurement, saved after each
# case) and validate.jsonl (one JSON object per validated step).
#
# Exit: 0 all phases ok; 1 a phase failed or timed out (the summary says which); 2 usage;
# 3 no usable GPU (nothing was measured; the summary says why).
#
# Time: every phase has its own limit, capped by what is left of the budget
# (CAPPLAN_GPU_CHECK_BUDGET_S, default 450 s, inside a 480 s device call). docs/calibration.md,
# "Running on a lent GPU", gives the expected times.
# Knobs (environment):
#   CAPPLAN_GPU_CHECK_BUDGET_S  overall budget in seconds (default 450)
#   CAPPLAN_GPU_CHECK_BIN       folder with capplan and capplan-calibrate (default build/carry/cli)
#   CAPPLAN_GPU_CHECK_QUICK     1 = `calibrate --quick` from the start (default 0: the full sweep,
#                               falling back to --quick --resume when it runs out of time)
#   CAPPLAN_GPU_CHECK_BUILD_DIR where to build when the carried binaries do not load
#                               (default build/gpu-check)
#   CUDA_HOME, NCCL_HOME, CUDAARCHS   the toolkit, NCCL and the architectures of a build here
set -uo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
max_files=7

usage() {
  echo "usage: $0 OUTDIR | $0 --dry-run OUTDIR | $0 --stage | $0 --check-carry [BINDIR]" >&2
  exit 2
}

# ---------------------------------------------------------------- libraries
# The CUDA toolkit's library folder, and the library folders of NVIDIA's Python wheels (NCCL as
# nvidia-nccl-cu13 where the toolkit has none), for LD_LIBRARY_PATH: the carried binaries have no
# RUNPATH of the machine they were built on.
cuda_home() {
  if [[ -n "${CUDA_HOME:-}" ]]; then echo "${CUDA_HOME}"; return; fi
  local nvcc
  nvcc=$(command -v nvcc 2>/dev/null) && { dirname "$(dirname "$(readlink -f "${nvcc}")")"; return; }
  [[ -d /usr/local/cuda ]] && echo /usr/local/cuda
}
nvidia_wheel_libs() {
  command -v python3 >/dev/null || return 0
  timeout 20 python3 - <<'PY' 2>/dev/null || true
import importlib.util, os
spec = importlib.util.find_spec("nvidia")
for root in (list(spec.submodule_search_locations) if spec else []):
    for name in sorted(os.listdir(root)):
        lib = os.path.join(root, name, "lib")
        if os.path.isdir(lib) and any(f.startswith("lib") and ".so" in f for f in os.listdir(lib)):
            print(lib)
PY
}
set_library_path() {
  local dirs=() home
  home=$(cuda_home)
  for d in "${home}/lib64" "${home}/lib" "${home}/targets/x86_64-linux/lib"; do [[ -d "${d}" ]] && dirs+=("${d}"); done
  [[ -n "${NCCL_HOME:-}" && -d "${NCCL_HOME}/lib" ]] && dirs+=("${NCCL_HOME}/lib")
  while IFS= read -r d; do [[ -n "${d}" ]] && dirs+=("${d}"); done < <(nvidia_wheel_libs)
  local joined
  joined=$(IFS=:; echo "${dirs[*]}")
  export LD_LIBRARY_PATH="${joined}${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
}

# check_carry BINDIR: every library of the carried binaries resolves (ldd, with LD_LIBRARY_PATH as
# set above), and each library they need themselves is a CUDA library or the C library's own: MPI,
# Qt, libstdc++ (linked statically), OpenMP or any other library of the build machine would be
# missing on a bare one.
check_carry() {
  local bin="$1" ok=0 exe
  local allowed='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libnccl\.so)'
  for exe in capplan capplan-calibrate; do
    if [[ ! -x "${bin}/${exe}" ]]; then
      echo "check-carry: ${bin}/${exe}: missing"
      ok=1
      continue
    fi
    local out
    out=$(ldd "${bin}/${exe}" 2>&1) || { echo "check-carry: ldd ${bin}/${exe} failed: ${out}"; ok=1; continue; }
    if grep -q "not found" <<<"${out}"; then
      echo "check-carry: ${exe}: unresolved: $(grep 'not found' <<<"${out}" | awk '{print $1}' | tr '\n' ' ')"
      ok=1
    fi
    # The binary's own needs (the CUDA libraries bring theirs, libstdc++ among them, where they are
    # installed); ldd's list when neither readelf nor objdump is there.
    local needed foreign
    if command -v readelf >/dev/null; then
      needed=$(readelf -d "${bin}/${exe}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    elif command -v objdump >/dev/null; then
      needed=$(objdump -p "${bin}/${exe}" | awk '$1 == "NEEDED" {print $2}')
    else
      needed=$(awk '{print $1}' <<<"${out}" | sed 's#.*/##')
    fi
    foreign=$(grep -v -E "${allowed}" <<<"${needed}" | tr '\n' ' ')
    if [[ -n "${foreign// /}" ]]; then
      echo "check-carry: ${exe}: needs libraries a bare GPU machine lacks: ${foreign}"
      ok=1
    fi
  done
  ((ok == 0)) && echo "check-carry: ${bin}: capplan and capplan-calibrate load (CUDA libraries from ${LD_LIBRARY_PATH:-the loader cache})"
  return "${ok}"
}

stage() {
  cd "${repo_root}" || exit 2
  cmake --preset gpu-carry >/dev/null || exit 1
  cmake --build --preset gpu-carry || exit 1
  local dest="${repo_root}/.deps"
  rm -rf "${dest}"
  mkdir -p "${dest}/include" "${dest}/share/cmake" "${dest}/share/eigen3" "${dest}/src"
  cp -r /usr/include/eigen3 "${dest}/include/"
  cp -r /usr/share/eigen3/cmake "${dest}/share/eigen3/"
  cp -r /usr/include/nlohmann "${dest}/include/"
  cp -r /usr/share/cmake/nlohmann_json "${dest}/share/cmake/"
  cp -r /usr/include/CLI "${dest}/include/"
  cp -r /usr/share/cmake/CLI11 "${dest}/share/cmake/"
  cp -r /usr/src/googletest "${dest}/src/"
  # Only the three programs travel (the build folder is ~60 MB, over what a call can carry).
  local carry="${repo_root}/build/carry"
  rm -rf "${carry}"
  mkdir -p "${carry}/cli" "${carry}/tests/calibrate"
  cp "${repo_root}/build/gpu-carry/cli/capplan" "${repo_root}/build/gpu-carry/cli/capplan-calibrate" "${carry}/cli/" || exit 1
  cp "${repo_root}/build/gpu-carry/tests/calibrate/capplan_cuda_backend_tests" "${carry}/tests/calibrate/" || exit 1
  set_library_path
  check_carry "${carry}/cli" || exit 1
  du -sh "${carry}" "${dest}"
  echo "staged: carry [\"build/carry\", \".deps\"] (both git-ignored) and run scripts/gpu-check.sh OUTDIR there"
}

dry_run=0
case "${1:-}" in
  --stage) [[ $# -eq 1 ]] || usage; stage; exit $? ;;
  --check-carry)
    [[ $# -le 2 ]] || usage
    set_library_path
    check_carry "${2:-${repo_root}/build/carry/cli}"
    exit $? ;;
  --dry-run) [[ $# -eq 2 ]] || usage; dry_run=1; shift ;;
  -*|"") usage ;;
esac
[[ $# -eq 1 ]] || usage

out="$1"
mkdir -p "${out}" || exit 2
out="$(cd "${out}" && pwd)"
log="${out}/gpu-check.log"
summary="${out}/summary.md"
env_file="${out}/env.txt"
validate_file="${out}/validate.jsonl"
: >"${log}"
rm -f "${validate_file}"

budget=${CAPPLAN_GPU_CHECK_BUDGET_S:-450}
quick=${CAPPLAN_GPU_CHECK_QUICK:-0}
bin="${CAPPLAN_GPU_CHECK_BIN:-${repo_root}/build/carry/cli}"
build="${CAPPLAN_GPU_CHECK_BUILD_DIR:-${repo_root}/build/gpu-check}"
jobs=$(nproc 2>/dev/null || echo 4)
declare -a results=()
device_name=""
gpu_id=""
profile=""
verdict="running"

say() { echo "[gpu-check $(date -u +%H:%M:%S)] $*" | tee -a "${log}"; }

# The summary, rewritten after every phase so that a call stopped at its limit still returns one.
write_summary() {
  {
    echo "# capplan GPU check"
    echo
    echo "verdict: ${verdict}"
    echo
    echo "- device: ${device_name:-none found}"
    echo "- catalog GPU: ${gpu_id:-none lists this device}"
    echo "- binaries: ${bin}"
    local mode=""
    ((dry_run)) && mode=" (dry run: nothing built or measured)"
    echo "- elapsed: ${SECONDS} s of a ${budget} s budget${mode}"
    echo
    echo "## Phases"
    for r in "${results[@]}"; do echo "- ${r}"; done
    if [[ -s "${env_file}" ]]; then
      echo
      echo "## Environment"
      echo '```'
      cat "${env_file}"
      echo '```'
    fi
    if [[ -n "${profile}" && -s "${profile}" ]]; then
      echo
      echo "## Profile"
      echo "\`$(basename "${profile}")\`, $(wc -c <"${profile}") bytes; notes:"
      echo '```'
      grep -A12 '"notes"' "${profile}" | head -14
      echo '```'
    fi
    if [[ -s "${validate_file}" ]]; then
      echo
      echo "## Measured vs predicted steps (validate.jsonl)"
      echo '```'
      # One line per case: its exit code, then the step measured and predicted, and their error.
      if command -v python3 >/dev/null; then
        python3 -c 'import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    r = c.get("result") or {}
    step = "measured %s s, predicted %s s, relative error %s" % (
        r.get("measured_step_s"), r.get("predicted_step_s"), r.get("relative_error")) if r else "no result"
    print("%-28s exit %d, %s" % (c["case"], c["exit"], step))' "${validate_file}" 2>&1
      else
        cat "${validate_file}"
      fi
      echo '```'
    fi
    if grep -q -E "FAILED|TIMED OUT" <(printf '%s\n' "${results[@]}"); then
      echo
      echo "## Errors (lines of gpu-check.log)"
      echo '```'
      grep -E "capplan: (error|warning)|error:|FATAL|Failed|FAILED" "${log}" | tail -20 || true
      echo '```'
    fi
  } >"${summary}.tmp" && mv -f "${summary}.tmp" "${summary}"
}
trap 'verdict="stopped by a signal after ${SECONDS} s"; results+=("stopped by a signal"); write_summary; exit 1' TERM INT

# run_phase NAME LIMIT_S CMD...: CMD under `timeout`, capped by what is left of the budget (10 s
# are kept for the summary); output to the log; records "NAME: status, seconds"; rewrites the summary.
run_phase() {
  local name="$1" limit="$2"
  shift 2
  local left=$((budget - SECONDS - 10))
  if ((left < 15)); then
    say "${name}: skipped, budget spent"
    results+=("${name}: skipped (budget spent)")
    write_summary
    return 124
  fi
  ((limit > left)) && limit=${left}
  say "${name}: start (limit ${limit} s): $*"
  local t0=${SECONDS} rc
  timeout --kill-after=10 "${limit}" "$@" >>"${log}" 2>&1
  rc=$?
  local status="ok"
  ((rc == 124 || rc == 137)) && status="TIMED OUT after ${limit} s"
  ((rc != 0 && rc != 124 && rc != 137)) && status="FAILED (exit ${rc})"
  say "${name}: ${status} in $((SECONDS - t0)) s"
  results+=("${name}: ${status}, $((SECONDS - t0)) s")
  write_summary
  return "${rc}"
}

finish() {  # finish CODE VERDICT
  verdict="$2"
  write_summary
  local n
  n=$(find "${out}" -maxdepth 1 -type f | wc -l)
  if ((n > max_files)); then
    say "ERROR: ${n} files in ${out}, more than ${max_files}"
    exit 1
  fi
  say "done: ${verdict} (${n} files in ${out})"
  exit "$1"
}

# ---------------------------------------------------------------- environment
set_library_path
export CAPPLAN_DATA_DIR="${CAPPLAN_DATA_DIR:-${repo_root}/data}"
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)"
  echo "kernel: $(uname -r)"
  echo "git: $(git -C "${repo_root}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "nproc: ${jobs}"
  echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH}"
  echo "--- nvidia-smi"
  if command -v nvidia-smi >/dev/null; then
    timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
      --format=csv 2>&1 || echo "nvidia-smi failed"
  else
    echo "nvidia-smi: not found"
  fi
  echo "--- tools"
  command -v nvcc >/dev/null && nvcc --version | tail -2
  command -v cmake >/dev/null && cmake --version | head -1
  "${CXX:-c++}" --version 2>&1 | head -1
  command -v python3 >/dev/null && python3 --version
  echo "--- NCCL"
  if [[ -e "$(cuda_home)/include/nccl.h" ]]; then
    grep -E "define NCCL_(MAJOR|MINOR|PATCH) " "$(cuda_home)/include/nccl.h" | awk '{printf "%s ", $3}' | sed 's/ /./; s/ /./; s/ $//'
    echo " (CUDA toolkit)"
  fi
  command -v python3 >/dev/null && timeout 20 python3 -m pip show nvidia-nccl-cu13 2>/dev/null | grep -E "^Version" |
    sed 's/^Version: /nvidia-nccl-cu13 wheel /'
} >"${env_file}" 2>&1
cat "${env_file}" >>"${log}"
results+=("environment: ok")

# ---------------------------------------------------------------- the device
if command -v nvidia-smi >/dev/null; then
  device_name=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/ *$//')
fi
if [[ -z "${device_name}" ]]; then
  say "no device found: nvidia-smi is missing or lists no GPU"
  results+=("device: no device found (nvidia-smi is missing or lists no GPU); nothing was built or measured")
  finish 3 "no device found"
fi
say "device: ${device_name}"
results+=("device: ${device_name}")

# ---------------------------------------------------------------- the binaries
carried=0
if check_carry "${bin}" >>"${log}" 2>&1; then
  carried=1
  results+=("binaries: carried ones load ($(basename "$(dirname "${bin}")"))")
else
  results+=("binaries: the carried ones do not load here (gpu-check.log, check-carry)")
fi
write_summary
if ((carried == 0 && dry_run == 0)); then
  # The fallback: configure and build here, with the carried header-only dependencies and
  # GoogleTest's sources (.deps) where the system has none.
  prefix="${CMAKE_PREFIX_PATH:-}"
  deps="${repo_root}/.deps"
  [[ -d "${deps}/include" ]] && prefix="${deps}${prefix:+;${prefix}}"
  if [[ -d "${deps}/src/googletest" && ! -f "${build}/_gtest/lib/cmake/GTest/GTestConfig.cmake" ]]; then
    run_phase gtest 180 bash -c "cmake -S '${deps}/src/googletest' -B '${build}/_gtest_build' -DBUILD_GMOCK=OFF \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX='${build}/_gtest' -DCMAKE_INSTALL_LIBDIR=lib && \
      cmake --build '${build}/_gtest_build' -j ${jobs} && cmake --install '${build}/_gtest_build'"
  fi
  [[ -f "${build}/_gtest/lib/cmake/GTest/GTestConfig.cmake" ]] && prefix="${build}/_gtest;${prefix}"
  cfg=(cmake -S "${repo_root}" -B "${build}" -DCMAKE_BUILD_TYPE=Release -DCAPPLAN_CUDA=ON -DCAPPLAN_BUILD_BENCH=OFF
    -DCAPPLAN_BUILD_GUI=OFF -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON "-DCMAKE_CUDA_ARCHITECTURES=${CUDAARCHS:-90}")
  command -v ninja >/dev/null && cfg+=(-G Ninja)
  [[ -n "${prefix}" ]] && cfg+=("-DCMAKE_PREFIX_PATH=${prefix}")
  [[ -n "${NCCL_HOME:-}" ]] && cfg+=("-DNCCL_HOME=${NCCL_HOME}")
  targets=(--target capplan capplan-calibrate)
  if run_phase configure 120 "${cfg[@]}"; then
    targets+=(capplan_cuda_backend_tests)
  else
    run_phase configure-no-tests 120 "${cfg[@]}" -DBUILD_TESTING=OFF
  fi
  run_phase build 300 cmake --build "${build}" -j "${jobs}" "${targets[@]}"
  bin="${build}/cli"
fi
capplan="${bin}/capplan"
tests_bin="$(dirname "${bin}")/tests/calibrate/capplan_cuda_backend_tests"

# ---------------------------------------------------------------- smoke test, naming
if [[ -x "${capplan}" ]]; then
  run_phase smoke 30 "${capplan}" --version
  gpu_id=$("${capplan}" catalog gpus --device "${device_name}" --format json 2>>"${log}" |
    grep -m1 -o -E '"id": *"[^"]+"' | sed -E 's/.*"([^"]+)"$/\1/')
fi
stem="${gpu_id}"
if [[ -z "${stem}" ]]; then
  # Not in the catalog: the device's own name, lower case, words joined by hyphens.
  stem=$(echo "${device_name}" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9.]+/-/g; s/^-+|-+$//g')
  results+=("naming: '${device_name}' is in no catalog entry's device_names; profile named ${stem}")
fi
profile="${out}/${stem}.json"
records="${out}/${stem}.records.json"
say "profile: ${profile}"
write_summary

if ((dry_run)); then
  results+=("dry run: would calibrate into $(basename "${profile}") (+ $(basename "${records}")), validate 5 steps into validate.jsonl, then run the GPU tests")
  finish 0 "dry run complete"
fi
if [[ ! -x "${capplan}" ]]; then
  finish 1 "no capplan binary (build failed)"
fi

# ---------------------------------------------------------------- calibrate (before the tests)
# The full sweep, its records saved after every case; when it runs out of time it still leaves a
# partial profile, and the --quick sweep resumes from its records to finish the launch and step
# cases a profile needs most.
if [[ "${quick}" == 1 ]]; then
  run_phase calibrate-quick 200 "${capplan}" calibrate --backend cuda --quick --out "${profile}" --format json
else
  run_phase calibrate 240 "${capplan}" calibrate --backend cuda --out "${profile}" --format json
  rc=$?
  if ((rc == 124 || rc == 137 || rc == 143)); then
    say "the full sweep ran out of time; resuming its records with --quick"
    run_phase calibrate-quick-resume 90 "${capplan}" calibrate --backend cuda --quick --resume --out "${profile}" --format json
  fi
fi
if [[ ! -s "${profile}" && -s "${records}" ]]; then
  run_phase fit-only 30 "${capplan}" calibrate --fit-only "${records}" --out "${profile}" --format json
fi

# ---------------------------------------------------------------- validate
# The measured layer is the layer slice of the estimate's op list (sim/layer_step.hpp): the default
# GPT-style bf16 layer, a Llama-3-8B-shaped layer (GQA 32/8 heads, SwiGLU 14336, RMSNorm, RoPE)
# with explicit-score attention, with fused attention in bf16 and in fp8, and the same layer as a
# serving decode step (32 sequences over 4,096 cached tokens). The backend has no flash kernel: its
# fused attention is the batched GEMMs of the op list's fused attention, scaled by the causal work
# share, so the fused cases check the GEMM side of a fused layer, not a FlashAttention kernel.
validate_cases=(
  "default|"
  "llama-bf16|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --seq-len 2048 --gated-ffn --rmsnorm --rope --dtype bf16"
  "llama-fused-attention-bf16|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --seq-len 2048 --gated-ffn --rmsnorm --rope --flash-attention --dtype bf16"
  "llama-fused-attention-fp8|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --seq-len 2048 --gated-ffn --rmsnorm --rope --flash-attention --dtype fp8"
  "llama-decode-bf16|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --gated-ffn --rmsnorm --rope --dtype bf16 --decode-context 4096 --micro-batch 32"
)
# One line of validate.jsonl: {"case", "exit", "seconds", "result": <capplan's JSON or null>}.
jsonl_line() {  # jsonl_line CASE EXIT SECONDS FILE
  if command -v python3 >/dev/null; then
    python3 -c 'import json, sys
try:
    result = json.load(open(sys.argv[4]))
except Exception:
    result = None
print(json.dumps({"case": sys.argv[1], "exit": int(sys.argv[2]), "seconds": int(sys.argv[3]), "result": result}))' "$@"
  else
    local body
    body=$(tr -d '\n' <"$4")
    printf '{"case": "%s", "exit": %s, "seconds": %s, "result": %s}\n' "$1" "$2" "$3" "${body:-null}"
  fi
}
if [[ -s "${profile}" ]]; then
  tmp="${out}/.validate.tmp"
  for case in "${validate_cases[@]}"; do
    name="${case%%|*}"
    read -r -a flags <<<"${case#*|}"
    left=$((budget - SECONDS - 10))
    if ((left < 40)); then
      results+=("validate ${name}: skipped (budget spent)")
      continue
    fi
    t0=${SECONDS}
    timeout --kill-after=10 $((left < 90 ? left - 20 : 70)) "${capplan}" validate --backend cuda --profile "${profile}" \
      --format json "${flags[@]}" >"${tmp}" 2>>"${log}"
    rc=$?
    jsonl_line "${name}" "${rc}" $((SECONDS - t0)) "${tmp}" >>"${validate_file}"
    status="exit ${rc}"
    ((rc != 0)) && status="FAILED (exit ${rc})"
    results+=("validate ${name}: ${status}, $((SECONDS - t0)) s")
    write_summary
  done
  rm -f "${tmp}"
else
  results+=("validate: FAILED (no profile to validate)")
fi

# ---------------------------------------------------------------- GPU unit tests (last)
if [[ -x "${tests_bin}" ]]; then
  run_phase gpu-tests 90 "${tests_bin}" --gtest_brief=1
  if grep -q -E "^\[  SKIPPED \]" "${log}"; then
    results+=("gpu-tests: some SKIPPED (no usable device?)")
  fi
else
  results+=("gpu-tests: not run (${tests_bin} missing)")
fi

if grep -q -E "FAILED|TIMED OUT" <(printf '%s\n' "${results[@]}"); then
  finish 1 "finished with failures"
fi
finish 0 "all phases ok"
