// The device side of the HC pre-norm's mix launch: the vector cores run the pre-norm's vector pass (hi and lo,
// D zeroed, the ends) and then the sums of squares of A's rows (kernel::hc_prenorm_beside_gemm on
// npu_hc_vector.hpp's target); the cube core waits for the pass and runs the K-grouped BF16 GEMM
// (npu_gemm_launch.hpp's run_k_grouped_gemm, hi and lo as its two B). No kernel logic here.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/hc_prenorm.hpp"
#include "npu_gemm_launch.hpp"
#include "npu_hc_vector.hpp"

namespace deepgemm_ascend::tile::npu {

__aicore__ inline void run_hc_prenorm_gemm(const DgaHcGemmParams& p) {
  if ASCEND_IS_AIC {
    // hi, lo, D and the ends written: MTE2 waits, the scalar (which reads the ends) behind it.
    cross_core_wait<PIPE_MTE2>(HcVecTarget<>::kHcPassDone);
    barrier_all();
    run_k_grouped_gemm<bfloat16_t>(p.gemm);
  }
  if ASCEND_IS_AIV {
    HcVecTarget<>::Ctx ctx;
    const IeeeCasts ieee;  // hi = bf16(b) as the host rounds it (|b| past bf16's range: inf)
    kernel::hc_prenorm_beside_gemm<HcVecTarget<>>(ctx, p.hc);
    barrier_all();
  }
}

}  // namespace deepgemm_ascend::tile::npu
