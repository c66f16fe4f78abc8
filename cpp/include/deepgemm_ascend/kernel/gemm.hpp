// GEMM kernel over a list of problems (one for a dense GEMM, one per group for grouped GEMMs):
// D_p = C_p + A_p @ B_p^T on one block (AI core), persistent over the output tiles of all problems.
//   A_p: logical [M_p, K_p], B_p: logical [N_p, K_p] (any strides; bf16, fp8 or packed fp4),
//   D_p / C_p: logical [M_p, N_p]. Scaled operands are promoted per K block (block_mmad.hpp).
// Tiles are numbered problem after problem, so uneven and empty groups balance across cores and an
// empty problem costs nothing.
#pragma once

#include <algorithm>

#include "deepgemm_ascend/block/block_mmad.hpp"
#include "deepgemm_ascend/block/epilogue.hpp"
#include "deepgemm_ascend/block/scheduler.hpp"

namespace deepgemm_ascend::kernel {

struct GemmProblem {
  layout::MatrixRef a;
  layout::MatrixRef b;
  block::EpilogueArgs epilogue;
  block::Scaling scaling{};
};

struct GemmArgs {
  const GemmProblem* problems = nullptr;
  int64_t num_problems = 0;
  heuristics::GemmConfig config;
  block::Operands operands{};
  bool scaled = false;
};

// Number of output tiles of one problem.
inline int64_t tile_count(const GemmProblem& p, const heuristics::GemmTiling& t) {
  return layout::ceil_div(p.a.rows, t.block_m) * layout::ceil_div(p.b.rows, t.block_n);
}

inline void gemm(tile::Core& core, const GemmArgs& args) {
  const auto& t = args.config.tiling;
  block::BlockMmad mmad(core, t, args.operands, args.scaled);
  const uint32_t l0c_bytes = uint32_t(tile::L0CGeometry{t.block_m, t.block_n}.bytes());
  tile::StageRing<1> l0c(core, tile::Pos::kL0C, l0c_bytes, tile::Pipe::kM, tile::Pipe::kFIX, "l0c");
  int64_t first = 0;  // global index of the current problem's first tile
  for (int64_t p = 0; p < args.num_problems; ++p) {
    const GemmProblem& pr = args.problems[p];
    const int64_t m = pr.a.rows, n = pr.b.rows, tiles = tile_count(pr, t);
    const block::GemmScheduler sched(m, n, t.block_m, t.block_n, args.config.swizzle);
    for (int64_t i = block::first_tile_of_block(first, core.block_idx(), core.block_num()); i < tiles;
         i += core.block_num()) {
      const auto [m0, n0, rows, cols, c_g] = sched.span(i);
      mmad(pr.a.block(m0, 0, rows, pr.a.cols), pr.b.block(n0, 0, cols, pr.b.cols), pr.scaling, m0, n0, l0c.acquire(),
           c_g);
      l0c.commit();
      block::store_tile(core, pr.epilogue, m0, n0, rows, cols, l0c.consume(), c_g);
      l0c.release();
    }
    first += tiles;
  }
}

}  // namespace deepgemm_ascend::kernel
