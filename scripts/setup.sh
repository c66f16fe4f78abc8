#!/usr/bin/env bash
# Installs what building and testing need on a fresh machine: GoogleTest and clang from Debian, torch (the CPU
# build on local disk) only when no torch is installed, and the Python build/test tools.
set -euo pipefail

# GoogleTest for the C++ tests; clang for the NPU compile step (scripts/check_npu.sh compiles with g++ and clang++).
missing=""
dpkg -s libgtest-dev >/dev/null 2>&1 || missing="$missing libgtest-dev"
command -v clang++ >/dev/null 2>&1 || missing="$missing clang"
if [ -n "$missing" ]; then
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi
if ! python -c "import torch" >/dev/null 2>&1; then
  python -m pip install -q torch==2.13.0
fi
# matplotlib: the plots (bench --plot, model --plot) and their tests.
python -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" cmake ninja pytest pytest-benchmark hypothesis matplotlib
