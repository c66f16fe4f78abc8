// The device side of an FP8 MQA-logits launch: the cube core runs the shared GEMM kernel (kernel/gemm.hpp)
// on q x kv^T with the promoted target (each tile's product goes to the group's vector cores), the vector
// cores run kernel/mqa_promotion.hpp over the same tiles. No kernel logic here.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/mqa_promotion.hpp"
#include "npu_gemm_launch.hpp"
#include "npu_mqa_vector.hpp"

namespace deepgemm_ascend::tile::npu {

__aicore__ inline void run_mqa_logits_fp8(const DgaMqaParams& p) {
  using T = Target<fp8_e4m3fn_t, Scales::kPromoted>;
  kernel::GemmProblem problem = problem_of<fp8_e4m3fn_t>(p.gemm);
  problem.scaling.enabled = true;  // every K block's product goes to the vector cores (no scales are read)
  const heuristics::GemmTiling t = tiling_of(p.gemm);
  const kernel::GemmArgs args = args_of(p.gemm, OperandFormat::kE4M3, true);
  const kernel::ProblemArray problems{&problem, 1};
  if ASCEND_IS_AIC {
    typename T::Ctx ctx(t.block_m, t.block_n);
    kernel::gemm<T>(ctx, args, t, problems);
  }
  if ASCEND_IS_AIV {
    VecCtx<typename T::Arch> ctx;
    kernel::mqa_promotion<MqaVecTarget<typename T::Arch>>(ctx, args, t, problems, p);
  }
  barrier_all();
}

}  // namespace deepgemm_ascend::tile::npu
