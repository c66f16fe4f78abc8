// The vector side of the NPU's MQA-logits mix kernel: each vector core of a cube's group walks the tiles
// the cube walks (kernel/gemm.hpp over the same problems and scheduler; problems.segment(q, problem) says
// where problem q's logits go: one problem, or one per request page), receives its half of every tile's
// (query, head) rows x KV columns of scores (one product per tile: K = head_dim = one promotion block)
// and adds its heads' share of the logits (VT::MqaEpilogue), each tile's inputs staged a few tiles ahead.
// NPU only: the host reduces in the cube's epilogue (block/mqa_epilogue.hpp).
#pragma once

#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"

namespace deepgemm_ascend::kernel {

// One tile's share of a vector core: rows [row0, row0 + rows) (its (query, head) rows; none: rows 0) x KV
// columns [n0, n0 + cols) of the problem whose logits `seg` places.
template <class Segment>
struct MqaJob {
  Segment seg;
  int64_t row0, rows, n0, cols;
};

template <class VT, class Tiling, class Problems>
DGA_DEVICE void mqa_promotion(typename VT::Ctx& ctx, const GemmArgs& args, const Tiling& t, const Problems& problems,
                              const DgaMqaParams& p) {
  typename VT::MqaEpilogue epi(ctx, t.block_m, t.block_n, p);
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
      const block::RowRange mine = block::vector_core_rows(sp.rows, sub);
      queue[tail % kDepth] = {seg, sp.m0 + mine.begin, mine.end - mine.begin, sp.n0, sp.cols};
      epi.stage(queue[tail++ % kDepth]);  // its inputs copied in while the tiles before are reduced
      if (tail - head == kDepth) epi.tile(queue[head++ % kDepth]);
    }
  }
  while (head < tail) epi.tile(queue[head++ % kDepth]);
}

}  // namespace deepgemm_ascend::kernel
