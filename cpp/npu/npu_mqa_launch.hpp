// The device side of an MQA-logits launch (FP8 or FP4, contiguous or paged KV): the cube core runs the
// shared GEMM kernel (kernel/gemm.hpp) on q x kv^T with a target that hands each tile's product to the
// group's vector cores, which run kernel/mqa_logits.hpp over the same tiles (the problems and where their
// logits go: kernel/mqa_segments.hpp). No kernel logic here.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/mqa_logits.hpp"
#include "deepgemm_ascend/kernel/mqa_segments.hpp"
#include "npu_gemm_launch.hpp"
#include "npu_mqa_vector.hpp"

namespace deepgemm_ascend::tile::npu {

__aicore__ inline GmRows gm_ints(uint64_t addr) {
  GmRows r;
  r.counts = gm_at<int32_t>(addr);
  return r;
}

// The cube core runs the GEMM kernel over `problems`, its vector cores the MQA reduction over the same.
// FP8: each tile's product goes to the vector cores (promoted, no scales read: the vector cores apply the
// KV scales); FP4: the MX cube applies the q and KV scales (UE8M0 per 32 values) and hands the product over.
// A tile is one K step (K = head_dim): kMqaL1Stages tiles' loads in flight hide the GM read latency.
// Each tile is one product (K = head_dim, one promotion block): two L0C stages let the next tile's Mmad
// overlap this tile's Fixpipe to the vector cores.
template <class Elem, int L1Stages>
using MqaTarget = Target<Elem, AscendC::IsSameType<Elem, fp8_e4m3fn_t>::value ? Scales::kPromoted : Scales::kMxHandOff,
                         arch::Ascend950, L1Stages, 2>;

template <class Elem, class Problems, int L1Stages = kernel::kMqaL1Stages>
__aicore__ inline void run_mqa(const DgaMqaParams& p, const Problems& problems) {
  using T = MqaTarget<Elem, L1Stages>;
  const kernel::GemmTiling t = tiling_of(p.gemm);
  const kernel::GemmArgs args = args_of(p.gemm, operand_format<Elem>(), true);
  if ASCEND_IS_AIC {
    typename T::Ctx ctx(t.block_m, t.block_n);
    kernel::gemm<T>(ctx, args, t, problems);
  }
  if ASCEND_IS_AIV {
    VecCtx<typename T::Arch> ctx;
    kernel::mqa_logits_vector<MqaVecTarget<typename T::Arch>>(ctx, args, t, problems, p);
  }
  barrier_all();
}

// The launch's problem with its product handed to the vector cores: FP8 with scaling enabled and no
// scales; FP4 with the MX scales of the parameters.
template <class Elem>
__aicore__ inline kernel::GemmProblem handed_problem(const DgaGemmParams& g) {
  kernel::GemmProblem problem = problem_of<Elem>(g);
  problem.scaling.enabled = true;
  return problem;
}

// Normal mode: one problem per tile of queries over the union of their ranges, compressed mode one per
// query (kernel/mqa_segments.hpp); or one problem over all of q x kv.
template <class Elem>
__aicore__ inline void run_mqa_logits(const DgaMqaParams& p) {
  const kernel::GemmProblem g = handed_problem<Elem>(p.gemm);
  if (kernel::mqa_one_problem(p, p.gemm.block_m)) return run_mqa<Elem>(p, kernel::DenseMqaSegments{g, &p});
  run_mqa<Elem>(p, kernel::query_mqa_segments(p, g, p.gemm.block_m, gm_ints(p.ks), gm_ints(p.ke)));
}

template <class Elem>
__aicore__ inline void run_paged_mqa_logits(const DgaPagedMqaParams& p) {
  const kernel::GemmProblem g = handed_problem<Elem>(p.mqa.gemm);
  constexpr int64_t kBits = int64_t(value_bits<Elem>());
  const bool mx = p.mqa.gemm.sfa.addr != 0;  // FP4: the q rows' and the blocks' UE8M0 scales
  const kernel::PagedMqaProblems<GmRows> src{g.a,
                                             g.b,
                                             g.a.rows * g.a.row_stride,
                                             p.block_bytes * 8 / kBits,
                                             p.batch,
                                             p.next_n,
                                             p.num_blocks,
                                             p.pages,
                                             p.width,
                                             gm_ints(p.context_lens),
                                             gm_ints(p.block_table),
                                             p.table_stride,
                                             g.scaling,
                                             mx ? g.a.rows * p.mqa.gemm.sfa.mn_stride : 0,
                                             mx ? p.block_bytes : 0};
  run_mqa<Elem, kernel::PagedMqaSegments<GmRows>, kernel::kPagedMqaL1Stages>(
      p.mqa, kernel::PagedMqaSegments<GmRows>{src, &p, kBits});
}

}  // namespace deepgemm_ascend::tile::npu
