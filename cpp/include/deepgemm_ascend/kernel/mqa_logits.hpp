// The vector side of the MQA-logits kernel, one source for the host and the Ascend 950's vector cores:
// each vector core of a cube's group walks the tiles the cube walks (kernel/gemm.hpp over the same problems
// and scheduler; problems.segment(q, problem) says where problem q's logits go, kernel/mqa_segments.hpp),
// takes its rows of every tile's (query, head) rows x KV columns of scores (K = head_dim: one product a
// tile) and, for each query whose heads it holds, adds
//   logit(i, j) = kv_scale[j] * sum_h relu(score(i, h, j)) * weight(i, h)    for ks[i] <= j < ke[i]
// (-inf for the tile's other columns) to the logits (VT::MqaEpilogue: the element work). Each tile's inputs
// are staged up to VT::kStaged - 1 tiles ahead of the one reduced. On the NPU the scores arrive from the
// cube (npu_mqa_vector.hpp), two vector cores a tile; the host has one vector core a group, which computes
// each tile's scores itself when it takes the tile (host/host_mqa_vector.hpp).
#pragma once

#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"

namespace deepgemm_ascend::kernel {

// One tile's share of a vector core: rows [row0, row0 + rows) (its (query, head) rows; none: rows 0) x KV
// columns [n0, n0 + cols) of `problem`, whose logits `seg` places.
template <class Segment>
struct MqaJob {
  Segment seg;
  int64_t row0, rows, n0, cols;
};

// Query q's rows in a job: [first, first + count) of the job's rows, its heads [head, head + count).
struct MqaQuery {
  int64_t q, first, count, head;
};

// The queries whose heads a job holds, in order: for (MqaQuery x = mqa_first(job, heads); x.count > 0;
// x = mqa_next(job, heads, x)).
template <class Job>
DGA_HOST_DEVICE MqaQuery mqa_query(const Job& job, int64_t heads, int64_t q) {
  const int64_t r0 = layout::imax(job.row0, q * heads), r1 = layout::imin(job.row0 + job.rows, (q + 1) * heads);
  return {q, r0 - job.row0, layout::imax(r1 - r0, 0), r0 - q * heads};
}
template <class Job>
DGA_HOST_DEVICE MqaQuery mqa_first(const Job& job, int64_t heads) {
  return mqa_query(job, heads, job.rows > 0 ? job.row0 / heads : 0);
}
template <class Job>
DGA_HOST_DEVICE MqaQuery mqa_next(const Job& job, int64_t heads, const MqaQuery& x) {
  return mqa_query(job, heads, x.q + 1);
}

template <class VT, class Tiling, class Problems>
DGA_DEVICE void mqa_logits_vector(typename VT::Ctx& ctx, const GemmArgs& args, const Tiling& t,
                                  const Problems& problems, const DgaMqaParams& p) {
  typename VT::MqaEpilogue epi(ctx, args, t, p);
  const int64_t sub = VT::sub_idx(ctx);
  block::TileWalk walk(t.block_m, t.block_n, args.config.swizzle, VT::group_idx(ctx), VT::group_num(ctx));
  // Jobs staged and not yet reduced: [head, tail), at most VT::kStaged (the epilogue's input stages).
  constexpr int kDepth = VT::kStaged;
  typename VT::Job queue[kDepth];
  int64_t head = 0, tail = 0;
  for (int64_t q = 0; q < problems.count(); ++q) {
    const GemmProblem pr = problems.get(q);
    const auto seg = problems.segment(q, pr);
    for (walk.begin(pr.a.rows, pr.b.rows); walk.more(); walk.next()) {
      const block::TileSpan sp = walk.span();
      const block::RowRange mine = VT::rows_of(sp.rows, sub);
      queue[tail % kDepth] = {seg, sp.m0 + mine.begin, mine.end - mine.begin, sp.n0, sp.cols};
      epi.stage(pr, queue[tail++ % kDepth]);  // its inputs copied in while the tiles before are reduced
      if (tail - head == kDepth) epi.tile(queue[head++ % kDepth]);
    }
  }
  while (head < tail) epi.tile(queue[head++ % kDepth]);
}

}  // namespace deepgemm_ascend::kernel
