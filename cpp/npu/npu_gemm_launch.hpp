// The device side of a GEMM launch: launch parameters -> the shared GEMM kernel template on the NPU
// target over a problem source (kernel/gemm_problems.hpp). No kernel logic: the K loop, the tiling and
// the event order are kernel/gemm.hpp's.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/gemm_promotion.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "npu_target.hpp"
#include "npu_vector.hpp"

namespace deepgemm_ascend::tile::npu {

__aicore__ inline layout::MatrixRef matrix(const DgaMatrix& m, int bits) {
  return {reinterpret_cast<const void*>(uintptr_t(m.addr)), 0, m.rows, m.cols, m.row_stride, m.col_stride, bits};
}

template <class Elem>
__aicore__ inline OperandFormat operand_format() {
  if constexpr (AscendC::IsSameType<Elem, fp8_e4m3fn_t>::value) return OperandFormat::kE4M3;
  else if constexpr (AscendC::IsSameType<Elem, fp8_e5m2_t>::value) return OperandFormat::kE5M2;
  else if constexpr (AscendC::IsSameType<Elem, fp4x2_e2m1_t>::value) return OperandFormat::kE2M1;
  else return OperandFormat::kBF16;
}

// Scales of the launch parameters: UE8M0 pairs (pack 2), one scale per 32 K values, or fp32 per
// gran_mn rows and promote_k values of K (ScaleRef counts fp32 strides in floats).
__aicore__ inline layout::ScaleRef scales_of(const DgaScales& s, int64_t promote_k) {
  layout::ScaleRef r;
  r.base = reinterpret_cast<const void*>(uintptr_t(s.addr));
  r.ue8m0 = s.fp32 == 0;
  r.pack = r.ue8m0 ? int(arch::MxFormat::kMxScalesPerPack) : 1;
  const int64_t unit = r.ue8m0 ? 1 : int64_t(sizeof(float));
  r.mn_stride = s.mn_stride / unit;
  r.k_stride = s.k_stride / unit;
  r.gran_mn = s.gran_mn;
  r.gran_k = r.ue8m0 ? int64_t(arch::MxFormat::kMxBlockK) : promote_k;
  return r;
}

// The problem of the launch parameters: A, B and D (accumulating into D when has_c), MX scales if given.
template <class Elem>
__aicore__ inline kernel::GemmProblem problem_of(const DgaGemmParams& p) {
  constexpr int kBits = int(value_bits<Elem>());
  const int d_bits = p.d_dtype == int32_t(core::DType::kFP32) ? 32 : 16;
  const layout::MatrixRef d = matrix(p.d, d_bits);
  kernel::GemmProblem problem{};
  problem.a = matrix(p.a, kBits);
  problem.b = matrix(p.b, kBits);
  problem.epilogue = {{const_cast<void*>(d.base), 0, d.rows, d.cols, d.row_stride, d.col_stride, d_bits},
                      core::DType(p.d_dtype), d, p.has_c != 0};
  if (p.sfa.addr != 0) problem.scaling = {true, scales_of(p.sfa, p.promote_k), scales_of(p.sfb, p.promote_k)};
  return problem;
}

__aicore__ inline kernel::GemmTiling tiling_of(const DgaGemmParams& p) {
  return {p.block_m, p.block_n, p.block_k, p.l0_k, kernel::kL1Stages, kernel::kL0Stages};
}

// masked_m / grouped_layout in device memory.
// (all >= 0: every group has `all` rows, nothing is read.)
struct GmRows {
  Gm<int32_t> counts;
  int32_t all = -1;
  __aicore__ inline int32_t operator()(int64_t g) const { return all >= 0 ? all : counts.GetValue(uint64_t(g)); }
};

__aicore__ inline kernel::GemmArgs args_of(const DgaGemmParams& p, OperandFormat fmt, bool scaled,
                                           bool second_b = false) {
  kernel::GemmArgs args{};
  args.config.swizzle = {p.swizzle_band, p.swizzle_along_m != 0};
  args.operands = {fmt, fmt, second_b};
  args.scaled = scaled;
  return args;
}

// The kernel over `problems` with tiling `t` (kernel::GemmTiling, or a StaticTiling whose fit in the
// 950's buffers is checked at compile time), on the cube core; S: how scaled operands are handled.
// Promoted (a mix kernel): the cube core runs the GEMM kernel, its vector cores the promotion.
template <class Elem, Scales S, class Tiling, class Problems>
__aicore__ inline void run(const DgaGemmParams& p, const Tiling& t, const Problems& problems, bool second_b = false) {
  using T = Target<Elem, S>;
  if constexpr (!AscendC::IsSameType<Tiling, kernel::GemmTiling>::value) {
    constexpr int kBits = int(value_bits<Elem>());
    static_assert(kernel::tiling_fits<typename T::Arch, Tiling, kBits, kBits, kBits, T::kMxScales>(),
                  "the tiling's stages do not fit the Ascend 950's L1 / L0 buffers");
  }
  const kernel::GemmArgs args = args_of(p, operand_format<Elem>(), S != Scales::kNone, second_b);
  if constexpr (S == Scales::kPromoted) {
    if ASCEND_IS_AIC {
      typename T::Ctx ctx(t.block_m, t.block_n, kGemmPromotionSlots, true);
      kernel::gemm<T>(ctx, args, t, problems);
    }
    if ASCEND_IS_AIV {
      VecCtx<typename T::Arch> ctx;
      const IeeeCasts ieee;  // a bf16 D rounds as the host's (overflow: inf); after the context's set-up
      kernel::gemm_promotion<VecTarget<typename T::Arch>>(ctx, args, t, problems, p.promote_k);
    }
  } else {
    typename T::Ctx ctx;
    const IeeeFixpipeCasts ieee;  // a bf16 D keeps inf / NaN as the host's; after the context's set-up
    kernel::gemm<T>(ctx, args, t, problems);
  }
  barrier_all();
}

template <class Elem, Scales S = Scales::kNone, class Tiling>
__aicore__ inline void run_gemm(const DgaGemmParams& p, const Tiling& t) {
  const kernel::GemmProblem problem = problem_of<Elem>(p);
  run<Elem, S>(p, t, kernel::ProblemArray{&problem, 1});
}

template <class Elem, Scales S = Scales::kNone>
__aicore__ inline void run_gemm(const DgaGemmParams& p) {
  run_gemm<Elem, S>(p, tiling_of(p));
}

template <class Elem, Scales S = Scales::kNone, class Tiling>
__aicore__ inline void run_masked_gemm(const DgaMaskedGemmParams& p, const Tiling& t) {
  const kernel::GemmProblem g0 = problem_of<Elem>(p.gemm);
  GmRows rows;
  rows.counts.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(uintptr_t(p.masked_m)));
  if (p.masked_m == 0) rows.all = int32_t(g0.a.rows);
  const kernel::MaskedProblems<GmRows> problems{g0.a,      g0.b,       g0.epilogue, p.a_group,   p.b_group,
                                                p.d_group, p.groups,   rows,        g0.scaling,  p.sfa_group,
                                                p.sfb_group};
  run<Elem, S>(p.gemm, t, problems);
}

// The runs of a group's chunks are as long as the tile (kernel/gemm_problems.hpp's run_window).
template <class Elem, Scales S = Scales::kNone, class Tiling>
__aicore__ inline void run_contiguous_gemm(const DgaContiguousGemmParams& p, const Tiling& t) {
  const kernel::GemmProblem w = problem_of<Elem>(p.gemm);
  GmRows ids;
  ids.counts.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(uintptr_t(p.grouped_layout)));
  if (p.psum) {
    run<Elem, S>(p.gemm, t,
                  kernel::PsumProblems<GmRows>{w.a, w.b, w.epilogue, p.b_group, p.groups, p.align, ids, w.scaling,
                                               p.sfb_group, int64_t(t.block_m)});
  } else {
    run<Elem, S>(p.gemm, t,
                  kernel::ContiguousProblems<GmRows>{w.a, w.b, w.epilogue, p.b_group, p.groups, p.align, ids,
                                                     w.scaling, p.sfb_group, int64_t(t.block_m)});
  }
}

template <class Elem, Scales S = Scales::kNone, class Tiling>
__aicore__ inline void run_k_grouped_gemm(const DgaKGroupedGemmParams& p, const Tiling& t) {
  const kernel::GemmProblem w = problem_of<Elem>(p.gemm);
  GmRows ends;
  ends.counts.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(uintptr_t(p.ends)));
  // C was copied into D: the kernel accumulates into D[g] (the epilogue's C is not read on the NPU).
  const layout::MatrixRef b2 = p.b2.addr != 0 ? matrix(p.b2, w.b.bits) : layout::MatrixRef{};
  run<Elem, S>(p.gemm, t,
                kernel::KGroupedProblems<GmRows>{w.a, w.b, w.epilogue, p.d_group, 0, p.groups, p.align, ends, w.scaling,
                                                 b2},
                S == Scales::kNone && p.b2.addr != 0);
}

// The grouped entries with the launch's run-time tiling (the precompiled kernels; the JIT passes a
// StaticTiling instead).
template <class Elem, Scales S = Scales::kNone>
__aicore__ inline void run_masked_gemm(const DgaMaskedGemmParams& p) {
  run_masked_gemm<Elem, S>(p, tiling_of(p.gemm));
}
template <class Elem, Scales S = Scales::kNone>
__aicore__ inline void run_contiguous_gemm(const DgaContiguousGemmParams& p) {
  run_contiguous_gemm<Elem, S>(p, tiling_of(p.gemm));
}
template <class Elem, Scales S = Scales::kNone>
__aicore__ inline void run_k_grouped_gemm(const DgaKGroupedGemmParams& p) {
  run_k_grouped_gemm<Elem, S>(p, tiling_of(p.gemm));
}

}  // namespace deepgemm_ascend::tile::npu
