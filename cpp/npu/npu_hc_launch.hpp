// The device side of the HC pre-norm's mix launch: the cube core runs the K-grouped BF16 GEMM
// (npu_gemm_launch.hpp's run_k_grouped_gemm, hi and lo as its two B), its vector cores the sums of squares
// of A's rows meanwhile (kernel::hc_sqr_sums_beside_gemm on npu_hc_vector.hpp's target). No kernel logic here.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/hc_prenorm.hpp"
#include "npu_gemm_launch.hpp"
#include "npu_hc_vector.hpp"

namespace deepgemm_ascend::tile::npu {

__aicore__ inline void run_hc_prenorm_gemm(const DgaHcGemmParams& p) {
  if ASCEND_IS_AIC {
    run_k_grouped_gemm<bfloat16_t>(p.gemm);
  }
  if ASCEND_IS_AIV {
    HcVecTarget<>::Ctx ctx;
    kernel::hc_sqr_sums_beside_gemm<HcVecTarget<>>(ctx, p.hc);
    barrier_all();
  }
}

}  // namespace deepgemm_ascend::tile::npu
