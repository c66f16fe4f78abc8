// The device side of a GEMM launch: DgaGemmParams -> the shared GEMM kernel template on the NPU
// target. No kernel logic: the K loop, the tiling and the event order are kernel/gemm.hpp's.
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

// The GEMM with tiling `t`: the launch parameters' run-time sizes (heuristics::GemmTiling) or a
// heuristics::StaticTiling, whose fit in the 950's buffers is checked at compile time.
template <class Elem, class Tiling>
__aicore__ inline void run_gemm(const DgaGemmParams& p, const Tiling& t) {
  using T = Target<Elem>;
  constexpr int kBits = int(value_bits<Elem>());
  const int d_bits = p.d_dtype == int32_t(core::DType::kFP32) ? 32 : 16;
  const layout::MatrixRef d = matrix(p.d, d_bits);
  kernel::GemmProblem problem{};
  problem.a = matrix(p.a, kBits);
  problem.b = matrix(p.b, kBits);
  problem.epilogue = {{const_cast<void*>(d.base), 0, d.rows, d.cols, d.row_stride, d.col_stride, d_bits},
                      core::DType(p.d_dtype), d, p.has_c != 0};
  kernel::GemmArgs args{};
  args.problems = &problem;
  args.num_problems = 1;
  args.config.swizzle = {p.swizzle_band, p.swizzle_along_m != 0};
  args.operands = {operand_format<Elem>(), operand_format<Elem>()};
  {
    typename T::Ctx ctx;
    kernel::gemm<T>(ctx, args, t);
  }
  AscendC::PipeBarrier<PIPE_ALL>();
}

template <class Elem>
__aicore__ inline void run_gemm(const DgaGemmParams& p) {
  run_gemm<Elem>(p, heuristics::GemmTiling{p.block_m, p.block_n, p.block_k, p.l0_k, heuristics::kL1Stages,
                                           heuristics::kL0Stages});
}

template <class Elem, int64_t BlockM, int64_t BlockN, int64_t BlockK, int64_t L0K>
__aicore__ inline void run_gemm(const DgaGemmParams& p, const heuristics::StaticTiling<BlockM, BlockN, BlockK, L0K>& t) {
  using Tiling = heuristics::StaticTiling<BlockM, BlockN, BlockK, L0K>;
  constexpr int kBits = int(value_bits<Elem>());
  static_assert(heuristics::tiling_fits<typename Target<Elem>::Arch, Tiling, kBits, kBits>(),
                "the tiling's stages do not fit the Ascend 950's L1 / L0 buffers");
  run_gemm<Elem, Tiling>(p, t);
}

}  // namespace deepgemm_ascend::tile::npu
