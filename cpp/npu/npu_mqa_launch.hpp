// The device side of an MQA-logits launch (FP8 or FP4, contiguous or paged KV): the cube core runs the
// shared GEMM kernel (kernel/gemm.hpp) on q x kv^T with a target that hands each tile's product to the
// group's vector cores, which run kernel/mqa_promotion.hpp over the same tiles. No kernel logic here.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/kernel/compressed_mqa_problems.hpp"
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

__aicore__ inline GmRows gm_ints(uint64_t addr) {
  GmRows r;
  r.counts = gm_at<int32_t>(addr);
  return r;
}

// One problem per query (compressed mode) or per tile of queries (normal mode) over the KV rows of their
// ranges [ks, ke) (kernel/compressed_mqa_problems.hpp), so that no tile lies outside every range of its
// queries: compressed mode, query i's logits row starting at column 0 with its first KV row; normal mode
// (`normal`), each KV row at its own column (the columns outside [ks, ke) were set to -inf before the
// launch). col0 is the problem's first KV row, so the vector cores' [ks, ke) test holds for every column
// they compute; ks / ke are read at their own addresses, from the problem's first query on.
struct CompressedMqaProblems {
  kernel::CompressedMqaProblems<GmRows> src;
  const DgaMqaParams* p;
  bool normal = false;
  __aicore__ inline int64_t count() const { return src.count(); }
  __aicore__ inline kernel::GemmProblem get(int64_t i) const { return src.get(i); }
  __aicore__ inline MqaSegment segment(int64_t i, const kernel::GemmProblem& pr) const {
    const int64_t q0 = src.first(i), start = src.start(pr);
    const uint64_t f32 = sizeof(float), i32 = sizeof(int32_t);
    return {p->weights + uint64_t(q0 * p->w_stride) * f32, p->ks + uint64_t(q0) * i32, p->ke + uint64_t(q0) * i32,
            p->kv_scale != 0 ? p->kv_scale + uint64_t(start) * f32 : 0,
            p->logits + uint64_t(q0 * p->logits_stride + (normal ? start : 0)) * f32, start};
  }
};

// One problem per (request, KV page): kernel/paged_mqa_problems.hpp over context_lens and block_table
// in device memory; a page's logits start at its request's first row and the page's first column.
struct PagedMqaProblems {
  kernel::PagedMqaProblems<GmRows> src;
  const DgaPagedMqaParams* p;
  int64_t bits;  // of a value of q and KV
  __aicore__ inline int64_t count() const { return src.count(); }
  __aicore__ inline kernel::GemmProblem get(int64_t i) const { return src.get(i); }
  __aicore__ inline MqaSegment segment(int64_t i, const kernel::GemmProblem& pr) const {
    const int64_t request = i / src.pages, col0 = (i % src.pages) * src.kv.rows, rows = request * src.next_n;
    const uint64_t block = p->mqa.gemm.b.addr + uint64_t(pr.b.origin * bits / 8);
    // FP8: the block's fp32 scales follow its rows (FP4: the cube applies the UE8M0 ones; none here).
    const uint64_t f32 = sizeof(float),
                   scales = bits == 8 ? block + uint64_t(src.kv.rows * src.kv.row_stride * bits / 8) : 0;
    const uint64_t logits = p->mqa.logits + uint64_t(rows * p->mqa.logits_stride + col0) * f32;
    return {p->mqa.weights + uint64_t(rows * p->mqa.w_stride) * f32, 0, p->context_lens + uint64_t(rows) * f32,
            scales, logits, col0};
  }
};

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
    kernel::mqa_promotion<MqaVecTarget<typename T::Arch>>(ctx, args, t, problems, p);
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

// Normal mode: one problem per tile of queries (block_m / heads of them) over the union of their ranges, as
// compressed mode's one per query (the tiles outside every range are not computed); without ks, or with a
// tile that does not hold whole queries, one problem, whose tiles set -inf outside the ranges.
template <class Elem>
__aicore__ inline void run_mqa_logits(const DgaMqaParams& p) {
  const kernel::GemmProblem g = handed_problem<Elem>(p.gemm);
  const bool normal = p.compressed == 0;
  if (normal && (p.ks == 0 || p.gemm.block_m % p.heads != 0)) return run_mqa<Elem>(p, DenseMqaProblems{g, &p});
  const kernel::CompressedMqaProblems<GmRows> src{g.a,          g.b,           p.heads,   normal ? g.b.rows : p.compressed,
                                                  gm_ints(p.ks), gm_ints(p.ke), g.scaling, normal ? p.gemm.block_m / p.heads : 1};
  run_mqa<Elem>(p, CompressedMqaProblems{src, &p, normal});
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
  run_mqa<Elem, PagedMqaProblems, kernel::kPagedMqaL1Stages>(p.mqa, PagedMqaProblems{src, &p, kBits});
}

}  // namespace deepgemm_ascend::tile::npu
