#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything (Release) and runs every test: unit, data, end-to-end CLI, architecture.
set -euo pipefail
cd "$(dirname "$0")/.."
# CAPPLAN_CUDA=ON makes a missing CUDA toolkit/NCCL a configure error instead of a skipped backend
# (CI sets it: the CUDA backend must compile and link there); AUTO builds it when found.
cmake --preset release -DCAPPLAN_CUDA="${CAPPLAN_CUDA:-AUTO}" >/dev/null
cmake --build --preset release
ctest --preset release -j "$(nproc)"
