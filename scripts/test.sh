#!/usr/bin/env bash
# Builds everything once (library, Python module, gtests) and runs ctest and pytest: what CI runs.
#   usage: scripts/test.sh [pytest arguments]   everything
#          scripts/test.sh --quick              the edit loop (scripts/test_quick.sh): under 5 minutes on 2
#                                               cores once build/release is built (one full run before)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--quick" ]; then exec bash scripts/test_quick.sh; fi
t0=$SECONDS
step() { echo "== $1 == (at $((SECONDS - t0)) s)"; }  # each step with the time it starts at
bash scripts/setup.sh

build=build/release  # scripts/install.sh's build directory: only the tests are compiled here
python -m pip install -q --no-build-isolation \
  -Cbuild-dir="$build" -Ccmake.define.DGA_BUILD_TESTS=ON -Ccmake.define.DGA_UNITY_TESTS=ON -Ccmake.define.DGA_CHECKED="${DGA_CHECKED:-OFF}" .

python scripts/gen_api_docs.py --check  # the API reference is current (before anything slow)
step "ctest"
ctest --test-dir "$build" --output-on-failure -j 2

# The NPU kernels on the instruction model (ctest label npu-model, above): planted errors in the NPU
# primitive layer must fail that suite.
step "NPU model: planted errors"
bash scripts/check_npu_model.sh "$build"

# Huawei's own 950 kernels (CATLASS examples, unmodified) on the instruction model: their golden checks pass.
step "CATLASS examples on the NPU model"
bash scripts/check_catlass.sh "$build"
# ... and the model rules they rely on bite: planted errors in copies of the model library fail them.
bash scripts/check_catlass_planted.sh "$build"

# The model's timing mode against Huawei's measured 950 times (CATLASS's timed kernels at the published
# shapes, timing only): every prediction within 0.75x-1.33x, and the faster of each pair predicted faster.
step "timing model against CATLASS's measured 950 times"
python scripts/timing/test_check_timing_catlass.py
python scripts/timing/test_catlass_side_by_side.py
python scripts/check_timing_catlass.py --build "$build" --timing-only

# The NPU compile step: every NPU translation unit with g++ and clang++ against the AscendC headers
# (../shared/third_party/asc-devkit), and the planted errors it must catch.
step "NPU compile (dav-3510, CPU-debug mode)"
bash scripts/check_npu.sh
bash scripts/check_npu.sh --mutations

# A C++ engine built against the installed package (find_package through the wheel's CMake config).
cmake_dir=$(python -c "import deepgemm_ascend; print(deepgemm_ascend.get_cmake_dir())")
cmake -S examples/cpp_engine -B build/cpp_engine -G Ninja -Ddeepgemm_ascend_DIR="$cmake_dir" > /dev/null
cmake --build build/cpp_engine > /dev/null
build/cpp_engine/cpp_engine

# The DeepSeek-V3 MoE layer and V3.2 indexer example against plain torch.
python examples/deepseek_v3_moe.py
step "pytest"
python -m pytest -q python/tests "$@"

# The tile machine's checked mode (capacity, alignment, event protocol, stage ownership): on the host arch
# over the GEMM suites (the host's tile configs), on the emulated 950 below over every kernel.
step "checked mode"
DGA_CHECKED=1 python -m pytest -q python/tests/test_gemm_bf16.py python/tests/test_gemm_fp8.py \
  python/tests/test_grouped_gemm.py python/tests/test_scale_fold.py

# The emulated Ascend 950: the NPU's buffer budgets, alignments, event ids, core count and tile configs,
# checked, over every kernel; not the suites that run no host kernel or do not depend on the host arch (the
# CLI, packaging, torch.compile registration, the npu-model dispatch and timing, the JIT's cache), nor the
# tests of the NPU kernels on the instruction model (named *npu_model*, *npu_kernel*, *npu_target*) or of
# Mega MoE's ranks (many ranks, failing peers: the single-rank tests run the same kernels): the pytest step
# runs them.
unchecked=(--deselect python/tests/test_cli.py --deselect python/tests/test_declared_deps.py
           --deselect python/tests/test_npu_timing.py
           --deselect python/tests/test_torch_compile.py --deselect python/tests/test_npu_dispatch.py
           --deselect python/tests/test_jit.py)
step "emulated ascend950, checked mode"
DGA_HOST_ARCH=ascend950 DGA_CHECKED=1 python -m pytest -q python/tests "${unchecked[@]}" \
  -k "not npu_model and not npu_kernel and not npu_target and not many_ranks and not failing_peer"

# The npu-model backend: the families' suites run by the NPU kernels on the instruction model (CPU
# tensors, DGA_BACKEND=npu-model); the summary counts the cases per family, and the cases of kernels
# without an NPU kernel yet as skipped with that reason.
step "npu-model backend"
DGA_BACKEND=npu-model python -m pytest -q python/tests/test_gemm_bf16.py python/tests/test_gemm_fp8.py \
  python/tests/test_grouped_gemm.py python/tests/test_einsum.py python/tests/test_mqa_logits.py \
  python/tests/test_paged_mqa_logits.py python/tests/test_hc_prenorm.py python/tests/test_engine_forms.py \
  python/tests/test_older_call_forms.py python/tests/test_legacy.py

# The JIT module end to end: the dense GEMM suites through entries compiled at first use, in a fresh cache
# (less the 4096 x 2112 x 7168 acceptance cases, as for the host ISAs below).
step "JIT-specialised GEMMs"
jit_cache=$(mktemp -d)
DGA_JIT=1 DG_JIT_CACHE_DIR="$jit_cache" python -m pytest -q python/tests/test_gemm_bf16.py python/tests/test_gemm_fp8.py \
  -k "not 4096x2112x7168"
rm -rf "$jit_cache"

# Every other host micro-kernel this machine supports runs the BF16 correctness suite as well, less its
# 4096 x 2112 x 7168 acceptance cases (minutes on the scalar kernel; the other shapes cover the same code).
others=$(python -c "import deepgemm_ascend as dg; print(' '.join(dg.info()['host_isas'][1:]))")
for isa in $others; do
  step "host ISA $isa"
  DGA_HOST_ISA=$isa python -m pytest -q python/tests/test_gemm_bf16.py -k "not 4096x2112x7168"
done

# The wheel in a fresh venv: consumer example and torch.compile tests.
step "wheel in a fresh venv"
bash scripts/test_wheel.sh

# AddressSanitizer + UndefinedBehaviorSanitizer: ctest and a pytest subset, zero findings.
step "ASan + UBSan"
bash scripts/test_sanitizers.sh
step "done"
