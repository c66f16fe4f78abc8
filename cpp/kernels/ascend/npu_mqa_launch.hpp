// The device side of an FP8 MQA-logits launch: the cube core runs the shared GEMM kernel (kernel/gemm.hpp)
// on q x kv^T with the promoted target (each tile's product goes to the group's vector cores), the vector
// cores run kernel/mqa_promotion.hpp over the same tiles. No kernel logic here.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/mqa_promotion.hpp"
#include "deepgemm_ascend/kernel/paged_mqa_problems.hpp"
#include "npu_gemm_launch.hpp"
#include "npu_mqa_vector.hpp"

namespace deepgemm_ascend::tile::npu {

// One problem (contiguous KV): q x kv^T of the launch parameters, its logits at their addresses.
struct DenseMqaProblems {
  kernel::GemmProblem problem;
  const DgaMqaParams* p;
  __aicore__ inline int64_t count() const { return 1; }
  __aicore__ inline kernel::GemmProblem get(int64_t) const { return problem; }
  __aicore__ inline MqaSegment segment(int64_t, const kernel::GemmProblem&) const {
    return {p->weights, p->ks, p->ke, p->kv_scale, p->logits, 0};
  }
};

// One problem per (request, KV page): kernel/paged_mqa_problems.hpp over context_lens and block_table
// in device memory; a page's logits start at its request's first row and the page's first column.
struct PagedMqaProblems {
  kernel::PagedMqaProblems<GmRows> src;
  const DgaPagedMqaParams* p;
  __aicore__ inline int64_t count() const { return src.count(); }
  __aicore__ inline kernel::GemmProblem get(int64_t i) const { return src.get(i); }
  __aicore__ inline MqaSegment segment(int64_t i, const kernel::GemmProblem& pr) const {
    const int64_t request = i / src.pages, col0 = (i % src.pages) * src.kv.rows, rows = request * src.next_n;
    const uint64_t block = p->mqa.gemm.b.addr + uint64_t(pr.b.origin);  // FP8: one byte per value
    const uint64_t f32 = sizeof(float), scales = block + uint64_t(src.kv.rows * src.kv.row_stride);
    const uint64_t logits = p->mqa.logits + uint64_t(rows * p->mqa.logits_stride + col0) * f32;
    return {p->mqa.weights + uint64_t(rows * p->mqa.w_stride) * f32, 0, p->context_lens + uint64_t(rows) * f32,
            scales, logits, col0};
  }
};

__aicore__ inline GmRows gm_ints(uint64_t addr) {
  GmRows r;
  r.counts = gm_at<int32_t>(addr);
  return r;
}

// The cube core runs the GEMM kernel over `problems`, its vector cores the MQA reduction over the same.
template <class Problems>
__aicore__ inline void run_mqa(const DgaMqaParams& p, const Problems& problems) {
  using T = Target<fp8_e4m3fn_t, Scales::kPromoted>;
  const heuristics::GemmTiling t = tiling_of(p.gemm);
  const kernel::GemmArgs args = args_of(p.gemm, OperandFormat::kE4M3, true);
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

// Every K block's product goes to the vector cores (no scales are read): scaling enabled, no scales.
__aicore__ inline kernel::GemmProblem promoted_problem(const DgaGemmParams& g) {
  kernel::GemmProblem problem = problem_of<fp8_e4m3fn_t>(g);
  problem.scaling.enabled = true;
  return problem;
}

__aicore__ inline void run_mqa_logits_fp8(const DgaMqaParams& p) {
  run_mqa(p, DenseMqaProblems{promoted_problem(p.gemm), &p});
}

__aicore__ inline void run_paged_mqa_logits_fp8(const DgaPagedMqaParams& p) {
  const kernel::GemmProblem g = promoted_problem(p.mqa.gemm);
  const kernel::PagedMqaProblems<GmRows> src{g.a,          g.b,     g.a.rows * g.a.row_stride, p.block_bytes,
                                             p.batch,      p.next_n, p.num_blocks,              p.pages,
                                             p.width,      gm_ints(p.context_lens), gm_ints(p.block_table),
                                             p.table_stride, g.scaling};
  run_mqa(p.mqa, PagedMqaProblems{src, &p});
}

}  // namespace deepgemm_ascend::tile::npu
