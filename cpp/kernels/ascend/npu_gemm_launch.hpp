// The device side of a GEMM launch: launch parameters -> the shared GEMM kernel template on the NPU
// target over a problem source (kernel/gemm_problems.hpp). No kernel logic: the K loop, the tiling and
// the event order are kernel/gemm.hpp's.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/npu_params.hpp"
#include "npu_target.hpp"

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

// The problem of the launch parameters: A, B and D (accumulating into D when has_c).
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
  return problem;
}

__aicore__ inline heuristics::GemmTiling tiling_of(const DgaGemmParams& p) {
  return {p.block_m, p.block_n, p.block_k, p.l0_k, heuristics::kL1Stages, heuristics::kL0Stages};
}

// masked_m / grouped_layout in device memory.
struct GmRows {
  Gm<int32_t> counts;
  __aicore__ inline int32_t operator()(int64_t g) const { return counts.GetValue(uint64_t(g)); }
};

// The kernel over `problems` with tiling `t` (heuristics::GemmTiling, or a StaticTiling whose fit in the
// 950's buffers is checked at compile time).
template <class Elem, class Tiling, class Problems>
__aicore__ inline void run(const DgaGemmParams& p, const Tiling& t, const Problems& problems) {
  using T = Target<Elem>;
  if constexpr (!AscendC::IsSameType<Tiling, heuristics::GemmTiling>::value) {
    constexpr int kBits = int(value_bits<Elem>());
    static_assert(heuristics::tiling_fits<typename T::Arch, Tiling, kBits, kBits>(),
                  "the tiling's stages do not fit the Ascend 950's L1 / L0 buffers");
  }
  kernel::GemmArgs args{};
  args.config.swizzle = {p.swizzle_band, p.swizzle_along_m != 0};
  args.operands = {operand_format<Elem>(), operand_format<Elem>()};
  {
    typename T::Ctx ctx;
    kernel::gemm<T>(ctx, args, t, problems);
  }
  AscendC::PipeBarrier<PIPE_ALL>();
}

template <class Elem, class Tiling>
__aicore__ inline void run_gemm(const DgaGemmParams& p, const Tiling& t) {
  const kernel::GemmProblem problem = problem_of<Elem>(p);
  run<Elem>(p, t, kernel::ProblemArray{&problem, 1});
}

template <class Elem>
__aicore__ inline void run_gemm(const DgaGemmParams& p) {
  run_gemm<Elem>(p, tiling_of(p));
}

template <class Elem>
__aicore__ inline void run_masked_gemm(const DgaMaskedGemmParams& p) {
  const kernel::GemmProblem g0 = problem_of<Elem>(p.gemm);
  GmRows rows;
  rows.counts.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(uintptr_t(p.masked_m)));
  const kernel::MaskedProblems<GmRows> problems{g0.a,        g0.b,     g0.epilogue, p.a_group, p.b_group,
                                                p.d_group,   p.groups, nullptr,     rows};
  run<Elem>(p.gemm, tiling_of(p.gemm), problems);
}

template <class Elem>
__aicore__ inline void run_contiguous_gemm(const DgaContiguousGemmParams& p) {
  const kernel::GemmProblem whole = problem_of<Elem>(p.gemm);
  GmRows ids;
  ids.counts.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(uintptr_t(p.grouped_layout)));
  if (p.psum) {
    run<Elem>(p.gemm, tiling_of(p.gemm),
              kernel::PsumProblems<GmRows>{whole.a, whole.b, whole.epilogue, p.b_group, p.groups, p.align, ids});
  } else {
    run<Elem>(p.gemm, tiling_of(p.gemm),
              kernel::ContiguousProblems<GmRows>{whole.a, whole.b, whole.epilogue, p.b_group, p.groups, p.align, ids});
  }
}

}  // namespace deepgemm_ascend::tile::npu
