#!/usr/bin/env bash
# Builds everything once (library, Python module, gtests) and runs ctest and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

build=build/test
python -m pip install -q --no-build-isolation \
  -Cbuild-dir="$build" -Ccmake.define.DGA_BUILD_TESTS=ON -Ccmake.define.DGA_CHECKED="${DGA_CHECKED:-OFF}" .

ctest --test-dir "$build" --output-on-failure -j 2
python -m pytest -q python/tests "$@"
