#!/usr/bin/env bash
# Installs deepgemm-ascend (and torch, when missing) into the current Python environment.
# The build runs in this environment (no isolated build env) in build/release, which scripts/test.sh
# configures again with the tests on: the library and the Python module are compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python -c "import torch" >/dev/null 2>&1; then
  python -m pip install -q torch==2.13.0
fi
python -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" cmake ninja
python -m pip install -q --no-build-isolation -Cbuild-dir=build/release .
