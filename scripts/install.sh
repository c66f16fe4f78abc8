#!/usr/bin/env bash
# Installs deepgemm-ascend (and torch, when missing) into the current Python environment.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python -c "import torch" >/dev/null 2>&1; then
  python -m pip install -q torch==2.13.0
fi
python -m pip install -q .
