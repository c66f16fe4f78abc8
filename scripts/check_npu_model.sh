#!/usr/bin/env bash
# Planted errors in the NPU primitive layer fail the npu-model suite: each mutation below is made in a copy
# of cpp/npu, the model's launchers that include the mutated file (cpp/npu_model/shim/entries_*.cpp,
# one translation unit per family; ninja's recorded dependencies say which) are compiled against the copy
# with the build's own commands and linked with the build's other objects into a copy of libdga_npu_model.so,
# and the model test (dga_npu_model_tests) runs on it through DGA_NPU_MODEL_LIB; it must fail, and the
# unmutated copy (every launcher compiled against it) must pass.
#   usage: check_npu_model.sh [build dir]   (default build/release, configured with DGA_BUILD_TESTS=ON)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
kernels="$root/cpp/npu"
cmds=$(ninja -C "$build" -t commands dga_npu_model)
link=$(grep -E -- "-o libdga_npu_model.so( |$)" <<< "$cmds")
# The objects compiled against cpp/npu, their commands (-O0: the step's compiles take most of its
# time, and at -O0 they take less than half as long as at -O1; no dependency file) and the kernel headers
# each one includes.
objs=(); declare -A compile_of deps_of
while IFS= read -r c; do
  o=$(grep -oE -- "-o [^ ]+\.o( |$)" <<< "$c" | cut -c4- | tr -d ' ' || true)  # not the precompiled header
  [ -n "$o" ] || continue
  d=$(ninja -C "$build" -t deps "$o" | grep -F "$kernels/" || true)
  [ -n "$d" ] || continue
  c=${c//-O3/-O0}; c=${c//-O2/-O0}
  # (the build's precompiled header is for -O3: the copies use their own, below)
  c=$(sed -E "s# -MD -MT [^ ]+ -MF [^ ]+##; s# -Winvalid-pch##; s# -include [^ ]+/cmake_pch\.hxx##" <<< "$c")
  objs+=("$o"); compile_of[$o]=$c; deps_of[$o]=$d
done < <(grep -F -- " -c " <<< "$cmds" | grep -F "dga_npu_model_kernels.dir")
[ ${#objs[@]} -gt 0 ] && [ -n "$link" ] || { echo "check_npu_model: no model library in $build" >&2; exit 1; }
test_exe="$build/cpp/tests/dga_npu_model_tests"
[ -x "$test_exe" ] || { echo "check_npu_model: no $test_exe" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# run <dir> <name> <file> <sed expression> [gtest filter] : in <dir>, 0 if the model test (the suites the
# filter names, default all) passes on the (mutated) copy, 1 if it fails, 2 if the copy does not build (the
# reason in <dir>/build.log). With a mutation, only the objects that include <file> are compiled again.
run() {
  local dir=$1 name=$2 file=$3 expr=$4 filter=${5:-*} o c l=$link
  mkdir -p "$dir"; cp -r "$kernels" "$dir/k"
  if [ -n "$expr" ]; then
    sed -i "$expr" "$dir/k/$file"
    cmp -s "$dir/k/$file" "$kernels/$file" && { echo "mutation '$name' changed nothing" > "$dir/build.log"; return 2; }
  fi
  for o in "${objs[@]}"; do
    grep -qF "$kernels/$file" <<< "${deps_of[$o]}" || continue  # an empty <file>: every object
    c=${compile_of[$o]//"-I$kernels "/"-I$dir/k "}
    c=${c//-o $o/-o $dir/${o##*/}}
    [ -f "$work/pch/pch.hpp.gch" ] && c+=" -include $work/pch/pch.hpp"
    (cd "$build" && eval "$c") >> "$dir/build.log" 2>&1 || return 2
    l=${l//$o/$dir/${o##*/}}
  done
  l=${l/-o libdga_npu_model.so/-o $dir/libdga_npu_model.so}
  (cd "$build" && eval "$l") >> "$dir/build.log" 2>&1 || return 2
  # A mutation only has to fail: the suite stops at its first failure (the control runs every test).
  local fast=(--gtest_filter="$filter"); [ -n "$expr" ] && fast+=(--gtest_fail_fast)
  { DGA_NPU_MODEL_LIB="$dir/libdga_npu_model.so" "$test_exe" "${fast[@]}" > "$dir/run.log" 2>&1; } 2> /dev/null && return 0
  return 1
}

# GCC: the devkit's headers (unmutated, most of a build) precompiled once for every copy's build.
compile=${compile_of[${objs[0]}]}
if "${compile%% *}" --version 2> /dev/null | grep -q "Free Software Foundation"; then
  mkdir -p "$work/pch"
  printf '#include <cstdlib>\n#include <cstring>\n#include <exception>\n#include <string>\n#include "kernel_operator.h"\n' \
    > "$work/pch/pch.hpp"
  pch=$(sed -E "s# -o [^ ]+# -o $work/pch/pch.hpp.gch#; s# -c [^ ]+# -x c++-header $work/pch/pch.hpp#" <<< "$compile")
  (cd "$build" && eval "$pch") > "$work/pch/build.log" 2>&1 || { rm -f "$work/pch/pch.hpp.gch"; tail -3 "$work/pch/build.log"; }
fi
[ -f "$work/pch/pch.hpp.gch" ] && echo "the devkit's headers precompiled for every build" || echo "the devkit's headers parsed by every build"

# Planted pipeline regressions (registered with regress below) must make the timing mode's prediction of the
# BF16 GEMM at 4096 x 7168 x 16384 worse than the control's: with the control's prediction as
# DGA_TIMING_BASELINE_US, the timing test fails on each.
timing_filter='NpuModelTiming.Bf16*'
regress_names=(); regress_files=(); regress_exprs=()
regress() { regress_names+=("$1"); regress_files+=("$2"); regress_exprs+=("$3"); }
run_regressions() {
  local base i n=${#regress_names[@]}
  base=$(grep -oE "predicted [0-9.]+ us" "$work/0/run.log" | head -1 | cut -d' ' -f2)
  [ -n "$base" ] || { echo "check_npu_model: the control printed no BF16 prediction"; exit 1; }
  echo "control: BF16 4096x7168x16384 predicted $base us"
  for ((i = 0; i < n; ++i)); do
    (if DGA_TIMING_BASELINE_US=$base run "$work/r$i" "${regress_names[$i]}" "${regress_files[$i]}" \
        "${regress_exprs[$i]}" "$timing_filter"; then echo 0; else echo $?; fi) > "$work/r$i.rc" &
    if (((i + 1) % 2 == 0)); then wait -n; fi
  done
  wait
  for ((i = 0; i < n; ++i)); do
    case $(cat "$work/r$i.rc") in
      0) echo "regression '${regress_names[$i]}' did NOT slow the prediction down"; exit 1 ;;
      2) echo "regression '${regress_names[$i]}' did not build:"; tail -5 "$work/r$i/build.log"; exit 1 ;;
    esac
    grep -q "predicted slower than the baseline" "$work/r$i/run.log" ||
      { echo "regression '${regress_names[$i]}' failed otherwise:"; grep -v "^\[" "$work/r$i/run.log" | tail -5; exit 1; }
    echo "regression '${regress_names[$i]}': $(grep -m1 -oE "predicted [0-9.]+ us" "$work/r$i/run.log") (slower, as expected)"
  done
}

# The control (no mutation) and the mutations, registered below, run as jobs on two workers (one per core),
# those that compile the most objects first; the control must pass and each mutation must fail the suite.
names=(control); files=(""); exprs=(""); filters=("*")
mutate() { names+=("$1"); files+=("$2"); exprs+=("$3"); filters+=("${4:-*}"); }
objects_for() {  # the number of objects a job compiles
  local o n=0
  for o in "${objs[@]}"; do grep -qF "$kernels/$1" <<< "${deps_of[$o]}" && n=$((n + 1)); done
  echo $n
}
run_all() {
  local n=${#names[@]} i running=0 order
  order=$(for ((i = 0; i < n; ++i)); do echo "$(objects_for "${files[$i]}") $i"; done | sort -k1,1nr -k2,2n | cut -d' ' -f2)
  for i in $order; do
    (if run "$work/$i" "${names[$i]}" "${files[$i]}" "${exprs[$i]}" "${filters[$i]}"; then echo 0; else echo $?; fi) > "$work/$i.rc" &
    if ((++running >= 2)); then wait -n; running=$((running - 1)); fi
  done
  wait
  if [ "$(cat "$work/0.rc")" != 0 ]; then
    echo "control (no mutation) failed:"; tail -n 20 "$work/0/run.log" "$work/0/build.log"; exit 1
  fi
  echo "control (no mutation): the model suite passes"
  for ((i = 1; i < n; ++i)); do
    case $(cat "$work/$i.rc") in
      0) echo "mutation '${names[$i]}' was NOT caught"; exit 1 ;;
      2) echo "mutation '${names[$i]}' did not build:"; tail -5 "$work/$i/build.log"; exit 1 ;;
    esac
    echo "mutation '${names[$i]}': the model suite fails as expected: $(grep -m1 -E "what\(\)|npu_model|Expected equality|Which is" "$work/$i/run.log" | cut -c1-150)"
  done
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
  npu_promotion.hpp 's/cross_core_set<PIPE_V>(kPromotionFree\[oldest_\]);/cross_core_set<PIPE_V>(kPromotionReady[oldest_]);/'
mutate "a promoted product's Mmad into the L0C tile its last Fixpipe still reads (the FIX -> M wait dropped)" \
  npu_promotion.hpp '/if (pending_\[turn_\]) wait_event<E::FIX_M>(fix_m_\[turn_\]);/d' '*Fp8BlockScaled*'
mutate "the promotion's second K block scaled by the first's factor" npu_vector.hpp \
  's/    R::Axpy(a, x, f1, m);/    R::Axpy(a, x, f0, m);/' '*Fp8BlockScaled*'
mutate "HC pre-norm: lo from b + hi instead of b - hi (a vector op's operands)" npu_hc_vector.hpp \
  's/R::Sub(r, x, h32, m);/R::Add(r, x, h32, m);/'
mutate "HC pre-norm: bf16 values of A loaded without unpacking (NORM instead of UNPACK_B16)" npu_hc_vector.hpp \
  's/R::LoadAlign<bfloat16_t, R::LoadDist::DIST_UNPACK_B16>(xb, a + i \* kL);/R::LoadAlign(xb, a + i * kL);/'
mutate "HC pre-norm: D's zeros stored without the V -> MTE3 flag (the store does not wait for Duplicate)" \
  npu_hc_vector.hpp '/void zero_d/,/out_.release/{s/out_.commit();//; s/out_.consume()/out/}'
mutate "MQA logits: ReLU dropped" npu_mqa_vector.hpp '/R::Relu(v, v, m);/d'
mutate "MQA logits: rows stored without the atomic add (the group's two vector cores overwrite each other)" \
  npu_mqa_vector.hpp 's/AscendC::SetAtomicAdd<float>();//'
mutate "MQA logits: a tile's staged scales and weights marked ready before their copies (commit first)" \
  npu_mqa_vector.hpp 's/const Tile t = in_.acquire();/const Tile t = in_.acquire();\n      in_.commit();/; /^      in_.commit();$/d'
mutate "MQA logits: the prefill's -inf only past ke (the rows' starts not read)" \
  npu_convert.hpp 's/gm_at<int32_t>(p.starts).GetValue(uint64_t(r))/int32_t(c0)/' '*Fp8MqaLogits*'
mutate "paged MQA logits: the prefill's -inf from column 0 on (the row lengths not read)" \
  npu_convert.hpp 's/gm_at<int32_t>(p.lens).GetValue(uint64_t(r))/0/'
mutate "FP8 per-column B scales read before their MTE2 load is waited (ring consume skipped)" \
  npu_vector.hpp 's/col_scales_ = scales_.consume().offset;/col_scales_ = t.offset;/'
mutate "FP4 MQA: the MX hand-off restarts the product at its last K step (the earlier steps' sum dropped)" \
  npu_target.hpp 's/init || (kPromoted \&\& promo != nullptr)/init || (kToVector \&\& promo != nullptr)/'
mutate "SwiGLU: the up values clamped from above only" npu_swiglu.hpp '/R::Maxs(u, u, -clamp, m);/d' \
  '*NpuModelSwiglu*'
mutate "SwiGLU: the chunk's h values converted before their MTE2 load is done (the stage marked ready first)" \
  npu_swiglu.hpp '/^    in_.commit();$/d;s/tensor<bfloat16_t>(in_.acquire())/tensor<bfloat16_t>([\&] { const Tile t = in_.acquire(); in_.commit(); return t; }())/' \
  '*NpuModelSwiglu*'
mutate "SwiGLU: interleaved gate / up blocks read contiguously (block stride 1)" npu_swiglu.hpp \
  's/swiglu::Columns{0, swiglu::kBlockFloats, 2 \* swiglu::kGroup, 2}/swiglu::Columns{0, swiglu::kBlockFloats, 2 * swiglu::kGroup, 1}/' \
  '*NpuModelSwiglu*'
mutate "Mega MoE route: the ring table's token written to its slot field" npu_mega_moe.hpp \
  's/src.SetValue(at + 1, token);/src.SetValue(at + 1, slot);/' 'NpuModelMegaMoe*'
mutate "Mega MoE route: recv_stats overwritten with the call's counts (not added to)" npu_mega_moe.hpp \
  's/stats.SetValue(uint64_t(e), stats.GetValue(uint64_t(e)) + n);/stats.SetValue(uint64_t(e), n);/' \
  'NpuModelMegaMoe*'
mutate "Mega MoE combine: the sum stored before its cast is done (the y stage marked ready before the cast)" \
  npu_mega_moe.hpp '/vreg::convert<Arch, bfloat16_t, float>(/{n;d};s/const Tile y = out_.acquire();/&  out_.commit();/' \
  'NpuModelMegaMoe*'
mutate "Mega MoE gather / scatter: a row stored before its load is waited (the copy ring's consume after the store)" \
  npu_mega_moe.hpp 's/load(ring_.acquire(), src/const Tile t = ring_.acquire(); load(t, src/;s/store(dst + uint64_t(at), ring_.consume(), n);/store(dst + uint64_t(at), t, n); ring_.consume();/' \
  'NpuModelMegaMoe*'
mutate "FP4 widening: the odd values' e4m3 written to byte 0 (RegLayout ZERO), the Or keeps the evens" \
  npu_vreg.hpp 's/kToE4m3Byte1>(hi, odd, m)/kToE4m3>(hi, odd, m)/' '*Fp4Widens*'
mutate "FP4 widening: the packed bytes loaded as one 256 B run (NORM, not UNPACK4_B8)" npu_vreg.hpp \
  's/R::LoadDist::DIST_UNPACK4_B8>(/R::LoadDist::DIST_NORM>(/' '*Fp4Widens*'
mutate "FP4 widening: the source row read at its value offset (not halved into bytes)" npu_convert.hpp \
  's|(r \* p.src.row_stride + c0) / 2|r * p.src.row_stride + c0|' '*Fp4Widens*'
# (Where the MQA problems' logits, ranges and KV scales are, kernel/mqa_segments.hpp, and Mega MoE's route
# plan, ring rows and combine slots, kernel/mega_moe_moves.hpp, are shared with the host, whose suites fail on
# such errors: not part of the NPU primitive layer.)
# The instructions' documented operand rules (test_npu_model_rules.cpp breaks each once): planted in the
# primitive layer, each fails the suite through its rule.
mutate "L0A tiles 512 B past 1024 B boundaries (MmadMx's 1024 B rule for fp8 operands)" npu_ctx.hpp \
  's|const uint32_t start = (top_\[int(pos)\] + a - 1) / a \* a;|const uint32_t start = (top_[int(pos)] + a - 1) / a * a + (pos == Pos::kL0A ? 512u : 0u);|' \
  '*Fp8AndFp4MxGemms*'
mutate "Fixpipe srcStride the tile's valid rows, not its rows rounded to 16 (the srcStride rule)" npu_primitives.hpp \
  's/p.srcStride = uint16_t(m_pad);/p.srcStride = uint16_t(m);/' '*Bf16Gemm*'
mutate "a tile's last Mmad keeps the L0C unit flags (its Fixpipe waits for blocks never marked written)" \
  npu_unit_flags.hpp 's/return last \&\& drained(m) ? kUnitChange : kUnitKeep;/return kUnitKeep;/' '*Bf16Gemm*'
mutate "a tile of 1-8 rows past a multiple of 16 ordered by the unit flags (its Fixpipe leaves half-fractals set)" \
  npu_unit_flags.hpp 's/return m % kRows == 0 || m % kRows > kHalf;/return true;/' '*Bf16Gemm*'
mutate "the GEMM's Fixpipe casts left saturating (CTRL[48] not set: inf -> bf16 max, NaN -> 0)" npu_gemm_launch.hpp \
  '/const IeeeFixpipeCasts ieee;/d' '*Bf16GemmKeepsInfinities*'
mutate "the vector casts leave CTRL[50] at 0 (a saturating cast to e4m3 gives 0 for NaN, the host NaN)" \
  npu_primitives.hpp '/AscendC::SetCtrlSpr<kFp8NanBit, kFp8NanBit>(1);/d' '*NpuModelSwiglu*'
regress "one L1 stage instead of two (the next K step's loads wait for the Mmads of the last)" npu_target.hpp \
  's/  using EventRing = npu::Ring<N, Producer, Consumer, Parts>;/  using EventRing = npu::Ring<(Producer == Pipe::kMTE2 \&\& Consumer == Pipe::kMTE1 ? 1 : N), Producer, Consumer, Parts>;/'
regress "a full barrier after each tile's Fixpipe (the next tile's loads and Mmads wait for it)" npu_target.hpp \
  's/      fixpipe_to_gm(gm_tensor<bfloat16_t>(dst.d.base, dst.d.origin), l0c, m, n, m_pad, ld, dst.c != nullptr, unit);/&\n    AscendC::PipeBarrier<PIPE_ALL>();/'
run_all
run_regressions
