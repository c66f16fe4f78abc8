#!/usr/bin/env bash
# Validation on an Ascend 950 (run by a user with the hardware; nothing here has been run on one yet).
# Builds with the NPU target required, runs ctest (including the `npu`-labelled on-device suite), the
# pytest suite, the emulated-950 suite and the benchmarks, and writes everything into one report.
#   usage: source <CANN>/set_env.sh && bash scripts/npu_validate.sh [report.md]
set -uo pipefail
cd "$(dirname "$0")/.."
report=${1:-npu_validation_report.md}
build=build/npu
: "${ASCEND_HOME_PATH:?source the set_env.sh of CANN first (ASCEND_HOME_PATH is not set)}"

status=0
section() { printf '\n## %s\n\n```\n' "$1" >> "$report"; }
run() {  # run a command, append its output to the report, remember a failure
  local title=$1; shift
  section "$title"
  echo "\$ $*" >> "$report"
  "$@" >> "$report" 2>&1
  local rc=$?
  printf '```\nexit status: %d\n' "$rc" >> "$report"
  [ "$rc" -eq 0 ] || status=1
  echo "$title: exit $rc"
}

{
  echo "# deepgemm-ascend NPU validation"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "- CANN: $ASCEND_HOME_PATH"
} > "$report"
run "npu-smi info" npu-smi info
run "install (DGA_NPU=ON)" python -m pip install --no-build-isolation -Cbuild-dir="$build" \
  -Ccmake.define.DGA_NPU=ON -Ccmake.define.DGA_BUILD_TESTS=ON .
run "info" deepgemm-ascend info
run "ctest: on-device suite (label npu)" ctest --test-dir "$build" -L npu --output-on-failure
run "ctest: everything" ctest --test-dir "$build" --output-on-failure -j 4
run "pytest" python -m pytest -q python/tests
run "pytest: emulated 950, checked" env DGA_HOST_ARCH=ascend950 DGA_CHECKED=1 python -m pytest -q python/tests \
  --deselect python/tests/test_cli.py
run "performance model" deepgemm-ascend model --shapes "4096,7168,16384;4096,4096,4096;128,7168,2048"
run "benchmarks" deepgemm-ascend bench --kernels bf16,fp8,moe,mqa,hc --no-progress
echo "wrote $report"
exit $status
