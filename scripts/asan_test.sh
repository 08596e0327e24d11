#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the core (no GUI, benchmarks or CUDA backend) with AddressSanitizer and UBSan (the
# asan-core preset: -O1, UBSan fatal) and runs its unit, data and CLI tests: a leak, an
# out-of-bounds access or undefined behaviour fails the test that triggers it.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
cmake --preset asan-core >/dev/null
cmake --build --preset asan-core -j "$(nproc)"
built=$(date +%s)
ctest --preset asan-core -j "$(nproc)"
echo "capplan asan: build $((built - start)) s, tests $(($(date +%s) - built)) s"
