#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages capplan builds with. Uses sudo when not root.
set -euo pipefail
packages=(
  g++ cmake ninja-build ccache pkg-config
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # capplan-gui (skipped when absent): Qt 6 Widgets + Charts (Charts' CMake package needs Qt6OpenGL,
  # a mere Recommends of qt6-base-dev), QtSvg for SVG chart export, a font for offscreen screenshots
  # and a CJK one for Chinese instance and model names (WenQuanYi Micro Hei, 4.6 MB)
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev fonts-dejavu-core fonts-wqy-microhei
  libeigen3-dev libopenmpi-dev openmpi-bin
  # fuzz/ (the fuzz preset): libFuzzer with ASan + UBSan needs Clang; Clang 16 is Debian 12's newest that
  # builds libstdc++ 12's <expected> (CMakeLists.txt), libclang-rt-16-dev has libclang_rt.fuzzer
  clang-16 libclang-rt-16-dev
  # tests/cluster/: a real single-node Slurm (with munge) runs scripts/cluster/calibrate.sbatch, and
  # Python's yaml module reads the Kubernetes manifests
  slurm-wlm munge python3-yaml
  # tests/cli/: the scenario and result JSON Schemas checked by a real Draft 2020-12 validator
  python3-jsonschema
)
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "capplan: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "capplan: all build dependencies are installed"
fi
