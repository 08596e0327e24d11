#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU check for the CUDA calibration backend, for a machine with an NVIDIA GPU (written for the
# lent single-H200 machine: nvcc 13, CMake and the CUDA libraries, no Debian packages, no network,
# NCCL possibly only inside the pip wheel nvidia-nccl-cu13).
#
#   scripts/gpu-check.sh OUTDIR      build with -DCAPPLAN_CUDA=ON, run `ctest -L gpu`, calibrate
#                                    (`capplan calibrate --backend cuda`), validate, write OUTDIR/
#   scripts/gpu-check.sh --stage-deps [DIR]
#                                    run on a Debian 12 dev machine: copy the header-only deps
#                                    (Eigen, nlohmann/json, CLI11, with their CMake configs) and the
#                                    GoogleTest sources into DIR (default .deps, git-ignored) so they
#                                    can travel with the tree (the device tool's `carry: [".deps"]`).
#
# OUTDIR receives: summary.md, h200-profile.json, validate.json (+ validate-<case>.json for the
# Llama-style layers), gpu-check.log, env.txt.
# Every step has its own time limit and the whole run a budget (CAPPLAN_GPU_CHECK_BUDGET_S,
# default 570 s, under the device tool's 600 s per command), so one hang cannot eat the lease.
# Knobs (environment):
#   CAPPLAN_GPU_CHECK_STEPS   steps to run, default "build test calibrate validate"
#   CAPPLAN_GPU_CHECK_QUICK   1 = `calibrate --quick` (default 0: the full CUDA sweep, sized to
#                             finish in under 6 minutes on one H200); falls back to --quick when
#                             the full sweep runs out of time
#   CAPPLAN_GPU_CHECK_BUDGET_S  overall budget in seconds (default 570)
#   CAPPLAN_GPU_CHECK_BUILD_DIR build folder (default build/gpu-check; kept between calls on a
#                             warm machine, so a second call can run "test calibrate validate" only)
#   CMAKE_PREFIX_PATH, NCCL_HOME, CXX, CUDAARCHS   passed through to CMake (CUDAARCHS default 90)
set -uo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

stage_deps() {
  local dest="${1:-${repo_root}/.deps}"
  mkdir -p "${dest}/include" "${dest}/share/cmake" "${dest}/share/eigen3" "${dest}/src"
  cp -r /usr/include/eigen3 "${dest}/include/"
  cp -r /usr/share/eigen3/cmake "${dest}/share/eigen3/"
  cp -r /usr/include/nlohmann "${dest}/include/"
  cp -r /usr/share/cmake/nlohmann_json "${dest}/share/cmake/"
  cp -r /usr/include/CLI "${dest}/include/"
  cp -r /usr/share/cmake/CLI11 "${dest}/share/cmake/"
  cp -r /usr/src/googletest "${dest}/src/"
  du -sh "${dest}"
  echo "staged into ${dest}; make sure it is git-ignored and name it in the device tool's carry"
}

if [[ "${1:-}" == "--stage-deps" ]]; then
  stage_deps "${2:-}"
  exit $?
fi
if [[ $# -ne 1 || "$1" == -* ]]; then
  echo "usage: $0 OUTDIR | $0 --stage-deps [DIR]" >&2
  exit 2
fi

out="$1"
mkdir -p "${out}" || exit 2
out="$(cd "${out}" && pwd)"
log="${out}/gpu-check.log"
summary="${out}/summary.md"
profile="${out}/h200-profile.json"
: >"${log}"

budget=${CAPPLAN_GPU_CHECK_BUDGET_S:-570}
steps=${CAPPLAN_GPU_CHECK_STEPS:-build test calibrate validate}
quick=${CAPPLAN_GPU_CHECK_QUICK:-0}
build="${CAPPLAN_GPU_CHECK_BUILD_DIR:-${repo_root}/build/gpu-check}"
jobs=$(nproc 2>/dev/null || echo 4)
declare -a results=()

say() { echo "[gpu-check $(date -u +%H:%M:%S)] $*" | tee -a "${log}"; }

# run_step NAME LIMIT_S CMD...: runs CMD under `timeout`, capped by what is left of the budget
# (10 s are kept for the summary); logs everything; records "NAME: status (seconds)".
run_step() {
  local name="$1" limit="$2"
  shift 2
  local left=$((budget - SECONDS - 10))
  if ((left < 15)); then
    say "${name}: skipped, budget spent"
    results+=("${name}: skipped (budget spent)")
    return 124
  fi
  ((limit > left)) && limit=${left}
  say "${name}: start (limit ${limit}s): $*"
  local t0=${SECONDS} rc
  timeout --kill-after=10 "${limit}" "$@" >>"${log}" 2>&1
  rc=$?
  local status="ok"
  ((rc == 124 || rc == 137)) && status="TIMED OUT after ${limit}s"
  ((rc != 0 && rc != 124 && rc != 137)) && status="FAILED (exit ${rc})"
  say "${name}: ${status} in $((SECONDS - t0))s"
  results+=("${name}: ${status}, $((SECONDS - t0)) s")
  return "${rc}"
}

wants() { [[ " ${steps} " == *" $1 "* ]]; }

# ---------------------------------------------------------------- environment
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "git: $(git -C "${repo_root}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "nproc: ${jobs}"
  echo "--- nvidia-smi"
  timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
    --format=csv 2>&1 || echo "nvidia-smi unavailable"
  echo "--- tools"
  command -v nvcc >/dev/null && nvcc --version | tail -2
  command -v cmake >/dev/null && cmake --version | head -1
  command -v ninja >/dev/null && echo "ninja $(ninja --version)"
  "${CXX:-c++}" --version 2>&1 | head -1
  command -v python3 >/dev/null && python3 --version
} >"${out}/env.txt" 2>&1
cat "${out}/env.txt" >>"${log}"

# NCCL: NCCL_HOME, else the CUDA toolkit (CMake looks there itself), else the pip wheel.
nccl_home="${NCCL_HOME:-}"
if [[ -z "${nccl_home}" ]] && ! ls /usr/local/cuda/include/nccl.h >/dev/null 2>&1; then
  nccl_home=$(python3 -c "import importlib.util as u; s = u.find_spec('nvidia.nccl'); print(list(s.submodule_search_locations)[0] if s else '')" 2>/dev/null || true)
fi
if [[ -n "${nccl_home}" && -e "${nccl_home}/include/nccl.h" ]]; then
  say "NCCL: ${nccl_home}"
  # The wheel ships libnccl.so.2 only; the backend links it by full path and finds it by RPATH.
else
  [[ -n "${nccl_home}" ]] && say "NCCL: ${nccl_home} has no include/nccl.h; building without NCCL"
  if ls /usr/local/cuda/include/nccl.h >/dev/null 2>&1; then
    say "NCCL: in the CUDA toolkit"
  else
    say "NCCL: not found; collectives will be reported as unavailable (GEMM, memory and the step still run)"
  fi
  nccl_home=""
fi

# Header-only deps and GoogleTest carried in .deps (see --stage-deps) when not installed.
prefix="${CMAKE_PREFIX_PATH:-}"
deps="${repo_root}/.deps"
if [[ -d "${deps}/include" ]]; then
  prefix="${deps}${prefix:+;${prefix}}"
  say "using carried deps in ${deps}"
fi
testing=ON
if wants build && [[ -d "${deps}/src/googletest" ]] && ! ls /usr/lib/*/cmake/GTest/GTestConfig.cmake >/dev/null 2>&1 &&
  ! ls /usr/lib/cmake/GTest/GTestConfig.cmake >/dev/null 2>&1; then
  gtest_prefix="${build}/_gtest"
  if [[ ! -f "${gtest_prefix}/lib/cmake/GTest/GTestConfig.cmake" ]]; then
    run_step gtest 180 bash -c "cmake -S '${deps}/src/googletest' -B '${build}/_gtest_build' -DBUILD_GMOCK=OFF \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX='${gtest_prefix}' -DCMAKE_INSTALL_LIBDIR=lib && \
      cmake --build '${build}/_gtest_build' -j ${jobs} && cmake --install '${build}/_gtest_build'"
  fi
  [[ -f "${gtest_prefix}/lib/cmake/GTest/GTestConfig.cmake" ]] && prefix="${gtest_prefix};${prefix}"
fi

# ---------------------------------------------------------------- build
if wants build; then
  cfg=(cmake -S "${repo_root}" -B "${build}" -DCMAKE_BUILD_TYPE=Release -DCAPPLAN_CUDA=ON
    -DCAPPLAN_BUILD_BENCH=OFF "-DCMAKE_CUDA_ARCHITECTURES=${CUDAARCHS:-90}")
  command -v ninja >/dev/null && cfg+=(-G Ninja)
  [[ -n "${prefix}" ]] && cfg+=("-DCMAKE_PREFIX_PATH=${prefix}")
  [[ -n "${nccl_home}" ]] && cfg+=("-DNCCL_HOME=${nccl_home}")
  if ! run_step configure 180 "${cfg[@]}"; then
    say "configure failed; retrying without tests (GoogleTest missing?)"
    testing=OFF
    run_step configure-no-tests 180 "${cfg[@]}" -DBUILD_TESTING=OFF
  fi
  # capplan runs calibrate and validate in capplan-calibrate (which links the CUDA backend).
  targets=(--target capplan capplan-calibrate)
  [[ "${testing}" == ON ]] && targets+=(capplan_cuda_backend_tests)
  run_step build 420 cmake --build "${build}" -j "${jobs}" "${targets[@]}"
fi
capplan="${build}/cli/capplan"
if [[ -x "${capplan}" && ! -x "${build}/cli/capplan-calibrate" ]]; then
  say "WARNING: ${build}/cli/capplan-calibrate is missing: capplan calibrate/validate will exit 2"
fi

# ---------------------------------------------------------------- GPU tests
if wants test; then
  if [[ -f "${build}/CTestTestfile.cmake" && "${testing}" == ON ]]; then
    run_step ctest-gpu 240 ctest --test-dir "${build}" -L gpu --output-on-failure --timeout 200
    # A skipped GPU test on this machine means the device was not usable: surface it.
    if grep -q "(Skipped)" "${log}"; then
      say "WARNING: GPU tests were skipped: no usable device (see gpu-check.log)"
      results+=("ctest-gpu: some tests SKIPPED (no usable device)")
    fi
  else
    results+=("ctest-gpu: not run (no test build)")
  fi
fi

# ---------------------------------------------------------------- calibration + validation
if wants calibrate && [[ -x "${capplan}" ]]; then
  rm -f "${profile}"
  if [[ "${quick}" == 1 ]]; then
    run_step calibrate-quick 150 "${capplan}" calibrate --backend cuda --quick --out "${profile}" --format json
  else
    run_step calibrate 330 "${capplan}" calibrate --backend cuda --out "${profile}" --format json
    rc=$?
    if ((rc == 124 || rc == 137)) && [[ ! -s "${profile}" ]]; then
      say "full sweep ran out of time; falling back to --quick"
      run_step calibrate-quick 150 "${capplan}" calibrate --backend cuda --quick --out "${profile}" --format json
    fi
  fi
fi
# The measured layer is the layer slice of the estimate's op list (sim/layer_step.hpp), so validate
# checks the layers estimates price: the default GPT-style bf16 layer (validate.json), then a
# Llama-3-8B-shaped layer (GQA 32/8 heads, SwiGLU 14336, RMSNorm, RoPE) with explicit-score and
# fused attention in bf16, and fused in fp8 (validate-<name>.json), and the same layer as a serving
# decode step (32 sequences over 4,096 cached tokens: the full sweep's decode attention shapes). The CUDA backend has no flash
# kernel: fused attention runs as its batched GEMMs scaled by the causal work share (the op list's
# fused GEMMs), so the fused cases check the GEMM side of a fused layer, not a flash kernel.
validate_cases=(
  "default|"
  "llama-bf16|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --seq-len 2048 --gated-ffn --rmsnorm --rope --dtype bf16"
  "llama-flash-bf16|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --seq-len 2048 --gated-ffn --rmsnorm --rope --flash-attention --dtype bf16"
  "llama-flash-fp8|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --seq-len 2048 --gated-ffn --rmsnorm --rope --flash-attention --dtype fp8"
  "llama-decode-bf16|--hidden 4096 --heads 32 --kv-heads 8 --ffn-hidden 14336 --gated-ffn --rmsnorm --rope --dtype bf16 --decode-context 4096 --micro-batch 32"
)
if wants validate && [[ -x "${capplan}" && -s "${profile}" ]]; then
  for case in "${validate_cases[@]}"; do
    name="${case%%|*}"
    read -r -a flags <<<"${case#*|}"
    file="${out}/validate-${name}.json"
    [[ "${name}" == default ]] && file="${out}/validate.json"
    left=$((budget - SECONDS - 10))
    if ((left < 30)); then
      results+=("validate ${name}: skipped (budget spent)")
      continue
    fi
    t0=${SECONDS}
    timeout --kill-after=10 $((left < 120 ? left : 120)) "${capplan}" validate --backend cuda --profile "${profile}" --format json \
      "${flags[@]}" >"${file}" 2>>"${log}"
    rc=$?
    cat "${file}" >>"${log}"
    results+=("validate ${name}: exit ${rc}, $((SECONDS - t0)) s")
  done
fi

# ---------------------------------------------------------------- summary
{
  echo "# capplan GPU check"
  echo
  echo '```'
  cat "${out}/env.txt"
  echo '```'
  echo
  echo "## Steps"
  for r in "${results[@]}"; do echo "- ${r}"; done
  echo "- total: ${SECONDS} s of a ${budget} s budget"
  echo
  echo "## GPU tests"
  echo '```'
  grep -E "tests passed|Test +#|Skipped|Failed|skipped:" "${log}" | grep -v "^\[gpu-check" | tail -20 || true
  echo '```'
  if grep -q -E "FAILED|TIMED OUT" <(printf '%s\n' "${results[@]}"); then
    echo
    echo "## Errors (capplan: lines of gpu-check.log)"
    echo '```'
    grep -E "capplan: (error|warning)|error:|FATAL|Failed" "${log}" | tail -20 || true
    echo '```'
  fi
  if [[ -s "${profile}" ]]; then
    echo
    echo "## Profile"
    echo "\`$(basename "${profile}")\`, $(wc -c <"${profile}") bytes"
  fi
  if [[ -s "${out}/validate.json" ]]; then
    echo
    echo "## Predicted vs measured training step (capplan validate --backend cuda)"
    echo '```json'
    cat "${out}/validate.json"
    echo '```'
  fi
  for f in "${out}"/validate-*.json; do
    [[ -s "${f}" ]] || continue
    echo
    echo "### $(basename "${f}" .json)"
    echo '```'
    grep -E '"(relative_error|predicted_step_s|measured_step_s)"' "${f}" | head -3 || true
    echo '```'
  done
} >"${summary}"
say "wrote ${summary}"
grep -q -E "FAILED|TIMED OUT" "${summary}" && exit 1
exit 0
