#!/usr/bin/env bash
# The wheel as users get it: `pip wheel .` (from the tested build), a fresh venv with only torch, the
# wheel and pytest, then the C++ consumer built against the installed package and the torch.compile tests,
# outside the source tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# From test.sh's build (the same configuration, so nothing is recompiled): the wheel holds what was tested.
python -m pip wheel -q --no-deps --no-build-isolation -w "$work/dist" . -Cbuild-dir=build/release \
  -Ccmake.define.DGA_BUILD_TESTS=ON -Ccmake.define.DGA_UNITY_TESTS=ON -Ccmake.define.DGA_CHECKED="${DGA_CHECKED:-OFF}"
wheel=$(ls "$work"/dist/deepgemm_ascend-*.whl)
echo "built $(basename "$wheel")"

python -m venv "$work/venv"
venv_py="$work/venv/bin/python"
"$venv_py" -m pip install -q --upgrade pip
"$venv_py" -m pip install -q torch==2.13.0  # the CPU build on local disk (see README)
"$venv_py" -m pip install -q "$wheel" pytest cmake ninja

cd "$work"  # nothing from the source tree on sys.path
cmake_dir=$("$venv_py" -c "import deepgemm_ascend; print(deepgemm_ascend.get_cmake_dir())")
"$work/venv/bin/cmake" -S "$root/examples/cpp_engine" -B "$work/engine" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$work/venv/bin/ninja" -Ddeepgemm_ascend_DIR="$cmake_dir" > /dev/null
"$work/venv/bin/cmake" --build "$work/engine" > /dev/null
"$work/engine/cpp_engine"
"$venv_py" -m pytest -q -p no:cacheprovider "$root/python/tests/test_torch_compile.py" \
  "$root/python/tests/test_packaging.py" --rootdir "$work"
"$venv_py" -c "import deepgemm_ascend, pydoc; text = pydoc.render_doc(deepgemm_ascend.fp8_gemm_nt); \
assert 'Raises' in text and '[M, K]' in text; print('help(fp8_gemm_nt) documents shapes and errors')"
