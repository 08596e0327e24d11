#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything (Release) and runs every test: unit, data, end-to-end CLI, architecture.
set -euo pipefail
cd "$(dirname "$0")/.."
# CAPPLAN_CUDA=ON makes a missing CUDA toolkit/NCCL a configure error instead of a skipped backend
# (CI sets it: the CUDA backend must compile and link there); AUTO builds it when found.
cmake --preset release -DCAPPLAN_CUDA="${CAPPLAN_CUDA:-AUTO}" >/dev/null
cmake --build --preset release
# The binaries scripts/gpu-check.sh carries to a GPU machine (no MPI, static C++ runtime), where the
# CUDA toolkit is here: calibrate.gpu_carry_binaries_load checks what they need. Mostly ccache hits
# of the release build (14 s on the 2-core machine).
if [[ "${CAPPLAN_CUDA:-AUTO}" != OFF ]] && { command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; }; then
  cmake --preset gpu-carry >/dev/null
  cmake --build --preset gpu-carry
fi
ctest --preset release -j "$(nproc)"
