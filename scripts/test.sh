#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything (Release) and runs every test: unit, data, end-to-end CLI, architecture.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release -j "$(nproc)"
