#!/usr/bin/env bash
# Builds an unmodified AscendC program (a CATLASS example directory) against the devkit and runs it on the
# instruction model: scripts/npu_run.sh EXAMPLE_DIR [--target NAME] [-- PROGRAM ARGS] (see npu_run.py).
set -euo pipefail
exec python "$(dirname "$0")/npu_run.py" "$@"
