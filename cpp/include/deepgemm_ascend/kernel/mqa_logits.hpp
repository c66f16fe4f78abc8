// Lightning-indexer MQA logits on one block: the cube computes q . kv^T for tiles of (query, head)
// rows x KV rows, the vector-side epilogue applies ReLU, the per-head weights and the head sum.
// Tiles whose KV rows no query of the tile attends to skip the cube (and are only cleaned).
#pragma once

#include <algorithm>

#include "deepgemm_ascend/block/block_mmad.hpp"
#include "deepgemm_ascend/block/mqa_epilogue.hpp"
#include "deepgemm_ascend/block/scheduler.hpp"

namespace deepgemm_ascend::kernel {

struct MqaArgs {
  layout::MatrixRef q;   // [S * H, D]: row i * H + h
  layout::MatrixRef kv;  // [SKV, D]
  block::Operands operands{};
  block::Scaling scaling{};  // FP4: per-32 UE8M0 scales of q rows and kv rows
  block::MqaOutput out;
  heuristics::GemmConfig config;
};

inline void mqa_logits(tile::Core& core, const MqaArgs& args) {
  const auto& t = args.config.tiling;
  const int64_t heads = args.out.heads, m = args.q.rows, n = args.kv.rows;
  const block::GemmScheduler sched(m, n, t.block_m, t.block_n, args.config.swizzle);
  block::BlockMmad mmad(core, t, args.operands, args.scaling.enabled);
  tile::StageRing<1> l0c(core, tile::Pos::kL0C, uint32_t(tile::L0CGeometry{t.block_m, t.block_n}.bytes()),
                         tile::Pipe::kM, tile::Pipe::kFIX, "l0c");
  for (int64_t i = core.block_idx(); i < sched.num_tiles(); i += core.block_num()) {
    const block::TileCoord tc = sched.tile(i);
    const int64_t m0 = tc.m * t.block_m, n0 = tc.n * t.block_n;
    const int64_t rows = std::min(t.block_m, m - m0), cols = std::min(t.block_n, n - n0);
    const int64_t q0 = m0 / heads, nq = rows / heads;
    const int32_t lo = *std::min_element(args.out.ks + q0, args.out.ks + q0 + nq);
    const int32_t hi = *std::max_element(args.out.ke + q0, args.out.ke + q0 + nq);
    if (n0 + cols <= lo || n0 >= hi) {
      block::mqa_clean_tile(args.out, q0, nq, n0, cols);
      continue;
    }
    const tile::L0CGeometry c_g{layout::align_up(rows, tile::kCubeBlock), layout::align_up(cols, tile::kCubeBlock)};
    mmad(args.q.block(m0, 0, rows, args.q.cols), args.kv.block(n0, 0, cols, args.kv.cols), args.scaling, m0, n0,
         l0c.acquire(), c_g);
    l0c.commit();
    block::mqa_reduce_tile(core, args.out, l0c.consume(), c_g, q0, nq, n0, cols);
    l0c.release();
  }
}

}  // namespace deepgemm_ascend::kernel
