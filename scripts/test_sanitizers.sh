#!/usr/bin/env bash
# ASan + UBSan: the library, the Python module and the gtests built with both sanitizers; ctest and a
# pytest subset (through the instrumented module) must finish with zero findings.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset asan -DPython_EXECUTABLE="$(command -v python)" > /dev/null
cmake --build --preset asan
ctest --preset asan -j 2

# The Python package with the instrumented _C and library next to it.
pkg=$(mktemp -d)
trap 'rm -rf "$pkg"' EXIT
cp -r python/deepgemm_ascend "$pkg/"
cp build/asan/_C*.so build/asan/libdeepgemm_ascend.so* "$pkg/deepgemm_ascend/"
asan_rt=$(c++ -print-file-name=libasan.so)
ubsan_rt=$(c++ -print-file-name=libubsan.so)
# Python and torch are not instrumented: their allocations are not leaks of ours.
LD_PRELOAD="$asan_rt:$ubsan_rt" PYTHONPATH="$pkg" \
  ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  python -m pytest -q -p no:cacheprovider python/tests/test_gemm_bf16.py python/tests/test_gemm_fp8.py \
  python/tests/test_grouped_gemm.py python/tests/test_layout.py python/tests/test_validation.py \
  python/tests/test_mqa_logits.py python/tests/test_hc_prenorm.py \
  "python/tests/test_mega_moe.py::test_single_rank_matches_unfused_bitwise" \
  "python/tests/test_mega_moe.py::TestValidation" -k "not 4096x2112x7168"  # the largest GEMM cases: minutes here
