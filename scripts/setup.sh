#!/usr/bin/env bash
# Installs what building and testing need on a fresh machine: GoogleTest from Debian, torch (the CPU
# build on local disk) only when no torch is installed, and the Python build/test tools.
set -euo pipefail

if ! dpkg -s libgtest-dev >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq libgtest-dev >/dev/null
fi
if ! python -c "import torch" >/dev/null 2>&1; then
  python -m pip install -q torch==2.13.0
fi
python -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" cmake ninja pytest pytest-benchmark hypothesis
