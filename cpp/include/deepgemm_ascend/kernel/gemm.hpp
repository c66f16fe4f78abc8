// Dense GEMM kernel: D = C + A @ B^T on one block (AI core), persistent over output tiles.
//   A: logical [M, K], B: logical [N, K] (any strides; bf16, fp8 or packed fp4), D / C: logical
//   [M, N]. Scaled operands are promoted per K block (block_mmad.hpp).
#pragma once

#include <algorithm>

#include "deepgemm_ascend/block/block_mmad.hpp"
#include "deepgemm_ascend/block/epilogue.hpp"
#include "deepgemm_ascend/block/scheduler.hpp"

namespace deepgemm_ascend::kernel {

struct GemmArgs {
  layout::MatrixRef a;
  layout::MatrixRef b;
  block::EpilogueArgs epilogue;
  heuristics::GemmConfig config;
  block::Operands operands{};
  block::Scaling scaling{};
};

inline void gemm(tile::Core& core, const GemmArgs& args) {
  const auto& t = args.config.tiling;
  const int64_t m = args.a.rows, n = args.b.rows;
  const block::GemmScheduler sched(m, n, t.block_m, t.block_n, args.config.swizzle);
  block::BlockMmad mmad(core, t, args.operands, args.scaling);
  const uint32_t l0c_bytes = uint32_t(tile::L0CGeometry{t.block_m, t.block_n}.bytes());
  tile::StageRing<1> l0c(core, tile::Pos::kL0C, l0c_bytes, tile::Pipe::kM, tile::Pipe::kFIX, "l0c");
  for (int64_t i = core.block_idx(); i < sched.num_tiles(); i += core.block_num()) {
    const block::TileCoord tc = sched.tile(i);
    const int64_t m0 = tc.m * t.block_m, n0 = tc.n * t.block_n;
    const int64_t rows = std::min(t.block_m, m - m0), cols = std::min(t.block_n, n - n0);
    const tile::L0CGeometry c_g{layout::align_up(rows, tile::kCubeBlock), layout::align_up(cols, tile::kCubeBlock)};
    mmad(args.a.block(m0, 0, rows, args.a.cols), args.b.block(n0, 0, cols, args.b.cols), m0, n0, l0c.acquire(), c_g);
    l0c.commit();
    block::store_tile(core, args.epilogue, m0, n0, rows, cols, l0c.consume(), c_g);
    l0c.release();
  }
}

}  // namespace deepgemm_ascend::kernel
