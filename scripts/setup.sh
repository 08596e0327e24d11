#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One command on a fresh Debian 12 machine: install dependencies, build (Release), and run
# `capplan estimate` on the built-in example scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target capplan
./build/release/cli/capplan estimate --format table
