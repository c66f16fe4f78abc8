// Lightning-indexer MQA logits on one block: the cube computes q . kv^T for tiles of (query, head)
// rows x KV rows, the vector-side epilogue applies ReLU, the per-head weights and the head sum.
// Work is a list of problems (one for contiguous KV, one per request page for a paged KV cache); tiles
// whose KV rows no query of the tile attends to skip the cube and are only cleaned.
#pragma once

#include <algorithm>

#include "deepgemm_ascend/block/block_mmad.hpp"
#include "deepgemm_ascend/host/mqa_epilogue.hpp"
#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/host/host_target.hpp"

namespace deepgemm_ascend::tile::host {

struct MqaProblem {
  layout::MatrixRef q;       // [queries * H, D]: row i * H + h
  layout::MatrixRef kv;      // [KV rows, D]
  block::Scaling scaling{};  // FP4: per-32 UE8M0 scales of q rows and kv rows
  tile::host::MqaOutput out;      // queries and columns relative to this problem
};

struct MqaArgs {
  const MqaProblem* problems = nullptr;
  int64_t num_problems = 0;
  block::Operands operands{};
  bool scaled = false;
  kernel::GemmConfig config;
};

inline int64_t tile_count(const MqaProblem& p, const kernel::GemmTiling& t) {
  return block::GemmScheduler(p.q.rows, p.kv.rows, t.block_m, t.block_n, kernel::Swizzle{}).num_tiles();
}

inline void mqa_logits(tile::host::Core& core, const MqaArgs& args) {
  const auto& t = args.config.tiling;
  block::BlockMmad<tile::host::HostTarget> mmad(core, t, args.operands);
  tile::host::StageRing<1> l0c(core, tile::Pos::kL0C, uint32_t(tile::L0CGeometry{t.block_m, t.block_n}.bytes()),
                         tile::Pipe::kM, tile::Pipe::kFIX, "l0c");
  block::TileWalk walk(t.block_m, t.block_n, args.config.swizzle, core.block_idx(), core.block_num());
  for (int64_t p = 0; p < args.num_problems; ++p) {
    const MqaProblem& pr = args.problems[p];
    const int64_t heads = pr.out.heads;
    for (walk.begin(pr.q.rows, pr.kv.rows); walk.more(); walk.next()) {
      const auto [m0, n0, rows, cols, c_g] = walk.span();
      const int64_t q0 = m0 / heads, nq = rows / heads;
      const int32_t lo = *std::min_element(pr.out.ks + q0, pr.out.ks + q0 + nq);
      const int32_t hi = *std::max_element(pr.out.ke + q0, pr.out.ke + q0 + nq);
      if (n0 + cols <= lo || n0 >= hi) {
        tile::host::mqa_clean_tile(pr.out, q0, nq, n0, cols);
        continue;
      }
      mmad(pr.q.block(m0, 0, rows, pr.q.cols), pr.kv.block(n0, 0, cols, pr.kv.cols), pr.scaling, m0, n0, l0c.acquire(),
           c_g);
      l0c.commit();
      tile::host::mqa_reduce_tile(core, pr.out, l0c.consume(), c_g, q0, nq, n0, cols);
      l0c.release();
    }
  }
}

}  // namespace deepgemm_ascend::tile::host
