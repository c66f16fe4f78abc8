#!/usr/bin/env bash
# Planted errors in the NPU primitive layer fail the npu-model suite: each mutation below is made in a copy
# of cpp/kernels/ascend, the model's launchers (cpp/kernels/model/model_entries.cpp) are compiled against
# the copy with the build's own commands into a copy of libdga_npu_model.so, and the model test
# (dga_npu_model_tests) runs on it through DGA_NPU_MODEL_LIB; it must fail, and the unmutated copy must pass.
#   usage: check_npu_model.sh [build dir]   (default build/test, configured with DGA_BUILD_TESTS=ON)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build/test}" && pwd)
cmds=$(ninja -C "$build" -t commands dga_npu_model)
compile=$(grep -F "model/model_entries.cpp" <<< "$cmds" | grep -F -- " -c ")
link=$(grep -E -- "-o libdga_npu_model.so( |$)" <<< "$cmds")
obj=$(grep -oE -- "-o [^ ]+model_entries.cpp.o" <<< "$compile" | cut -c4-)
[ -n "$compile" ] && [ -n "$link" ] && [ -n "$obj" ] || { echo "check_npu_model: no model library in $build" >&2; exit 1; }
test_exe="$build/cpp/tests/dga_npu_model_tests"
[ -x "$test_exe" ] || { echo "check_npu_model: no $test_exe" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# run <name> <file> <sed expression> : 0 if the model test passes on the (mutated) copy.
run() {
  local name=$1 file=$2 expr=$3
  rm -rf "$work/k"; cp -r "$root/cpp/kernels/ascend" "$work/k"
  if [ -n "$expr" ]; then
    sed -i "$expr" "$work/k/$file"
    cmp -s "$work/k/$file" "$root/cpp/kernels/ascend/$file" && { echo "mutation '$name' changed nothing" >&2; exit 1; }
  fi
  local c=${compile//-I$root\/cpp\/kernels\/ascend/-I$work\/k}
  c=${c//$obj/$work/e.o}
  local l=${link//$obj/$work/e.o}
  l=${l/-o libdga_npu_model.so/-o $work/libdga_npu_model.so}
  (cd "$build" && eval "$c" && eval "$l") > "$work/build.log" 2>&1 || { echo "mutation '$name' did not build:"; tail -5 "$work/build.log"; exit 1; }
  { DGA_NPU_MODEL_LIB="$work/libdga_npu_model.so" "$test_exe" > "$work/run.log" 2>&1; } 2> /dev/null
}

run "control" "" "" || { echo "control (no mutation) failed:"; tail -20 "$work/run.log"; exit 1; }
echo "control (no mutation): the model suite passes"
mutate() {  # mutate <name> <file> <sed expression>
  if run "$1" "$2" "$3"; then echo "mutation '$1' was NOT caught"; exit 1; fi
  echo "mutation '$1': the model suite fails as expected: $(grep -m1 -E "what\(\)|npu_model|Expected equality|Which is" "$work/run.log" | cut -c1-150)"
}
mutate "L0 stride in elements instead of fractals" npu_primitives.hpp \
  's/p.dstStride = uint16_t(ceil_div(mn, kFractalRows));/p.dstStride = uint16_t(mn);/'
mutate "MN-major operand copied without its transposition (ND instead of DN)" npu_target.hpp \
  's/if (src.col_stride == 1) copy_gm_to_l1_nd/if (true) copy_gm_to_l1_nd/'
mutate "B loaded transposed" npu_primitives.hpp 's/p.ifTranspose = false;/p.ifTranspose = true;/'
mutate "flag set on the wrong event (release sets ready)" npu_ring.hpp \
  's/set_event<kFree>(free_\[read_\]);/set_event<kReady>(ready_[read_]);/'
mutate "MX scale start counted in 32-value groups instead of 64-value pairs" npu_primitives.hpp \
  's|mx.yStartPosition = uint16_t(k0 / kMxBaseK);|mx.yStartPosition = uint16_t(k0 / (kMxBaseK / 2));|'
mutate "MX scale pairs of one layout copied as the other (ND / DN swapped)" npu_target.hpp \
  's/if (s.mn_stride == kPairBytes)/if (s.k_stride == kPairBytes)/'
mutate "flag set on the wrong pipe (the L1 ring's MTE2 -> MTE1 ready flag set for the cube pipe M)" npu_ring.hpp \
  's/src == Pipe::kMTE2 \&\& dst == Pipe::kMTE1   ? E::MTE2_MTE1/src == Pipe::kMTE2 \&\& dst == Pipe::kMTE1   ? E::MTE2_M/'
mutate "a scale in the wrong half of its pair (the L1 scale tile read one byte off)" npu_target.hpp \
  's/ctx.template tensor<fp8_e8m0_t>(scales), /ctx.template tensor<fp8_e8m0_t>(scales)[1], /'
mutate "the promotion's bf16 cast after the store ring's commit (the store no longer waits for it; found by the model)" \
  npu_vector.hpp '/if (d.rows > 0 \&\& !fp32) cast_bf16/d; s/      out_.consume();/&\n      if (d.rows > 0 \&\& !fp32) cast_bf16(uint32_t(d.rows));/'
mutate "a cross-core flag id wrong (the vector cores release a slot with its ready id: the cube waits forever)" \
  npu_promotion.hpp 's/cross_core_set<PIPE_V>(kPromotionFree\[slot_\]);/cross_core_set<PIPE_V>(kPromotionReady[slot_]);/'
