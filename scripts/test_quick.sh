#!/usr/bin/env bash
# The edit loop (scripts/test.sh --quick): under 5 minutes on a 2-core machine, provided the build directory
# is already built (scripts/install.sh and one full scripts/test.sh, which configures it with the tests on).
# It rebuilds incrementally, runs the gtests of the layers this branch touches, one pytest case per kernel
# family on the host and again on the npu-model backend, and compiles one NPU translation unit. The full
# scripts/test.sh is what CI runs (.ci/run).
#   env: DGA_BUILD_DIR (default build/release), DGA_CHECKED (as scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
step() { echo "== $1 == (at $((SECONDS - t0)) s)"; }
build=${DGA_BUILD_DIR:-build/release}
[ -f "$build/build.ninja" ] || {
  echo "test.sh --quick: $build is not built yet: run scripts/install.sh and scripts/test.sh once" >&2; exit 1; }

# The files this branch changed since it left main, committed or not, and new files.
base=$(git merge-base HEAD origin/main 2>/dev/null || git merge-base HEAD main 2>/dev/null || git rev-parse HEAD)
mapfile -t changed < <({ git diff --name-only "$base"; git ls-files --others --exclude-standard; } | sort -u)

# (a) The build: ninja rebuilds what is out of date; the package is reinstalled (the full run's pip line, a
# no-op build in the same directory, then the install: about 8 s more) only when ninja built anything or the
# Python sources changed since the last install from here.
step "incremental build"
stamp="$build/.quick_installed"
ninja -C "$build" -j 2 | tee "$build/.quick_ninja.log"
if grep -q "no work to do" "$build/.quick_ninja.log" && [ -f "$stamp" ] &&
   [ -z "$(find python/deepgemm_ascend -newer "$stamp" -print -quit)" ]; then
  echo "build and installed package are current"
else
  python -m pip install -q --no-build-isolation \
    -Cbuild-dir="$build" -Ccmake.define.DGA_BUILD_TESTS=ON -Ccmake.define.DGA_UNITY_TESTS=ON \
    -Ccmake.define.DGA_CHECKED="${DGA_CHECKED:-OFF}" .
  touch "$stamp"
fi
python scripts/gen_api_docs.py --check

# (b) The gtests of the touched layers (the labels of cpp/tests/CMakeLists.txt), and the suites of changed
# test files; every host layer (about 15 s) when no path maps to a layer.
labels=() suites=() tu=""
for f in "${changed[@]}"; do
  case $f in
    cpp/tests/npu_model/*) labels+=(npu-model) ;;
    cpp/tests/test_*.cpp) [ -f "$f" ] && suites+=($(grep -ohE '^TEST(_F|_P)?\([A-Za-z0-9_]+' "$f" | sed 's/.*(//')) ;;
    cpp/tests/c/*|*/api/*|*/api.hpp|*/c_api.h|*/bindings/*) labels+=(api) ;;
    cpp/npu_model/*) labels+=(npu_model npu-model) ;;
    cpp/npu/*)
      labels+=(npu-model); [[ -z $tu && $f == *.asc && -f $f ]] && tu=$f ;;
    cpp/host/*) labels+=(host) ;;
    */core/*) labels+=(core) ;;
    */layout/*) labels+=(layout) ;;
    */tile/*) labels+=(kernel host) ;;
    */block/*|*/kernel/*|*/comm/*|*/jit/*) labels+=(kernel) ;;
    */heuristics/*) labels+=(heuristics) ;;
    */arch/*) labels+=(heuristics runtime) ;;
    */runtime/*) labels+=(runtime) ;;
    CMakeLists.txt|*/CMakeLists.txt|cmake/*) labels+=(build) ;;
  esac
done
[ ${#labels[@]} -gt 0 ] || [ ${#suites[@]} -gt 0 ] || labels=(core layout host kernel heuristics runtime api)
join() { local IFS='|'; echo "$*"; }
if [ ${#labels[@]} -gt 0 ]; then
  mapfile -t labels < <(printf '%s\n' "${labels[@]}" | sort -u)
  step "gtests: layers ${labels[*]}"
  ctest --test-dir "$build" --output-on-failure -j 2 -L "^($(join "${labels[@]}"))$"
fi
if [ ${#suites[@]} -gt 0 ]; then
  mapfile -t suites < <(printf '%s\n' "${suites[@]}" | sort -u)
  step "gtests: suites of the changed test files"
  ctest --test-dir "$build" --output-on-failure -j 2 -R "(^|/)($(join "${suites[@]}"))\."
fi
if [ "$(ctest --test-dir "$build" -N -L '^unlayered$' | grep -c 'Test *#')" != 0 ]; then
  echo "test.sh --quick: gtest suites in no layer (ctest -N -L unlayered): add them to DGA_TEST_LAYERS" >&2
  exit 1
fi

# (c) One fast case per kernel family (pytest marker `smoke`, the set in python/tests/conftest.py) on the
# host; Mega MoE's case runs its NPU kernels on the model itself. (d) The families with NPU kernels again on
# the npu-model backend: their cases run by the NPU kernels on the instruction model.
step "pytest smoke, host"
python -m pytest -q -m smoke python/tests
step "pytest smoke, npu-model backend"
DGA_BACKEND=npu-model python -m pytest -q -m smoke python/tests/test_gemm_bf16.py python/tests/test_gemm_fp8.py \
  python/tests/test_grouped_gemm.py python/tests/test_mqa_logits.py python/tests/test_paged_mqa_logits.py \
  python/tests/test_hc_prenorm.py

# (e) One NPU translation unit against the devkit: the first changed one, else the BF16 GEMM's.
step "NPU compile: ${tu:-gemm_bf16.asc}"
bash scripts/check_npu.sh --tu "${tu:-gemm_bf16.asc}"
step "done"
