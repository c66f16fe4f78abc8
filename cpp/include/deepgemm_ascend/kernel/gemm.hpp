// GEMM kernel over a list of problems (one for a dense GEMM, one per group for grouped GEMMs):
// D_p = C_p + A_p @ B_p^T on one block (AI core), persistent over the output tiles of all problems.
//   A_p: logical [M_p, K_p], B_p: logical [N_p, K_p] (any strides; bf16, fp8 or packed fp4),
//   D_p / C_p: logical [M_p, N_p]. Scaled operands are promoted per K block (block_mmad.hpp).
// Tiles are numbered problem after problem, so uneven and empty groups balance across cores and an
// empty problem costs nothing. One source for the host and the NPU target (block_mmad.hpp).
#pragma once

#include "deepgemm_ascend/block/block_mmad.hpp"
#include "deepgemm_ascend/block/epilogue.hpp"
#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/kernel/gemm_problems.hpp"

namespace deepgemm_ascend::kernel {

struct GemmArgs {
  const GemmProblem* problems = nullptr;
  int64_t num_problems = 0;
  GemmConfig config;
  block::Operands operands{};
  bool scaled = false;
};

// Number of output tiles of one problem.
template <class Tiling>
DGA_HOST_DEVICE int64_t tile_count(const GemmProblem& p, const Tiling& t) {
  return block::GemmScheduler(p.a.rows, p.b.rows, t.block_m, t.block_n, Swizzle{}).num_tiles();
}

// Output tiles of all problems of a problem source (gemm_problems.hpp).
template <class Problems, class Tiling>
DGA_HOST_DEVICE int64_t tile_count(const Problems& problems, const Tiling& t) {
  int64_t tiles = 0;
  for (int64_t p = 0; p < problems.count(); ++p) tiles += tile_count(problems.get(p), t);
  return tiles;
}

// The kernel over the problems of `problems` (gemm_problems.hpp) with the tiling `t`: args.config.tiling's
// run-time values, or a kernel::StaticTiling whose sizes are constants of the instantiation (JIT
// entries, NPU kernels per config). args.problems is not read.
template <class Target, class Tiling, class Problems>
DGA_DEVICE void gemm(typename Target::Ctx& ctx, const GemmArgs& args, const Tiling& t, const Problems& problems) {
  // Two L0C stages (a target's choice, when two output tiles fit): the next tile's Mmads overlap this
  // tile's Fixpipe.
  using L0CRing = typename Target::template Ring<block::L0CStagesOf<Target>::value, tile::Pipe::kM, tile::Pipe::kFIX>;
  block::BlockMmad<Target, Tiling> mmad(ctx, t, args.operands);
  L0CRing l0c(ctx, {{tile::Pos::kL0C, uint32_t(tile::L0CGeometry{t.block_m, t.block_n}.bytes())}}, "l0c");
  block::TileWalk walk(t.block_m, t.block_n, args.config.swizzle, Target::block_idx(ctx), Target::block_num(ctx));
  for (int64_t p = 0; p < problems.count(); ++p) {
    const GemmProblem pr = problems.get(p);
    for (walk.begin(pr.a.rows, pr.b.rows); walk.more(); walk.next()) {
      const block::TileSpan sp = walk.span();
      const layout::MatrixRef b2 = pr.b2.block(sp.n0, 0, sp.cols, pr.b2.cols);
      mmad(pr.a.block(sp.m0, 0, sp.rows, pr.a.cols), pr.b.block(sp.n0, 0, sp.cols, pr.b.cols), pr.scaling, sp.m0,
           sp.n0, l0c.acquire(), sp.c_g, args.operands.second_b && pr.b2.base != nullptr ? &b2 : nullptr);
      l0c.commit();
      block::store_tile<Target>(ctx, pr.epilogue, sp.m0, sp.n0, sp.rows, sp.cols, l0c.consume(), sp.c_g);
      l0c.release();
    }
  }
}

template <class Target, class Tiling>
DGA_DEVICE void gemm(typename Target::Ctx& ctx, const GemmArgs& args, const Tiling& t) {
  gemm<Target>(ctx, args, t, ProblemArray{args.problems, args.num_problems});
}

template <class Target>
DGA_DEVICE void gemm(typename Target::Ctx& ctx, const GemmArgs& args) {
  gemm<Target>(ctx, args, args.config.tiling);
}

}  // namespace deepgemm_ascend::kernel
