// The vector side of the NPU's MQA-logits mix kernel: each vector core of a cube's group walks the tiles
// the cube walks (kernel/gemm.hpp over the same problems and scheduler; problems.segment(q, problem) says
// where problem q's logits go: one problem, or one per request page), receives its half of every tile's
// (query, head) rows x KV columns of scores (one product per tile: K = head_dim = one promotion block)
// and adds its heads' share of the logits (VT::MqaEpilogue). NPU only: the host reduces in the cube's
// epilogue (block/mqa_epilogue.hpp).
#pragma once

#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"

namespace deepgemm_ascend::kernel {

template <class VT, class Tiling, class Problems>
DGA_DEVICE void mqa_promotion(typename VT::Ctx& ctx, const GemmArgs& args, const Tiling& t, const Problems& problems,
                              const DgaMqaParams& p) {
  typename VT::MqaEpilogue epi(ctx, t.block_m, t.block_n, p);
  const int64_t group = VT::group_idx(ctx), groups = VT::group_num(ctx), sub = VT::sub_idx(ctx);
  int64_t first = 0;
  for (int64_t q = 0; q < problems.count(); ++q) {
    const GemmProblem pr = problems.get(q);
    const int64_t tiles = tile_count(pr, t);
    const block::GemmScheduler sched(pr.a.rows, pr.b.rows, t.block_m, t.block_n, args.config.swizzle);
    const auto seg = problems.segment(q, pr);
    for (int64_t i = block::first_tile_of_block(first, group, groups); i < tiles; i += groups) {
      const block::TileSpan sp = sched.span(i);
      // The cube splits each product by rows: the first ceil(rows / 2) to sub-core 0.
      const int64_t half = (sp.rows + 1) / 2, r0 = sub * half, rows = layout::imax(layout::imin(sp.rows - r0, half), 0);
      epi.tile(seg, sp.m0 + r0, rows, sp.n0, sp.cols);
    }
    first += tiles;
  }
}

}  // namespace deepgemm_ascend::kernel
