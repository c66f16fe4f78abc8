// The vector side of a GEMM whose K blocks are promoted on the vector cores (FP32 block scales on the
// Ascend 950, where the cube cannot scale a product by row and by column): each vector core of a cube's
// group walks the tiles the cube walks (kernel/gemm.hpp: same problems, scheduler and tile order) and,
// for its half of every tile's rows, adds each K block's fp32 product, received from the cube, times the
// block's row scale and column scale to an fp32 accumulator, two K blocks at a time where it can (one load
// and one store of the accumulator for both); then it stores its rows of the tile to D.
// Scales are fp32 (layout::ScaleRef); the column scale is constant over gran_n columns. When gran_n is a
// multiple of the target's shortest scaled run (VTarget::kScaleRun values) the rows are scaled run by
// run; otherwise (gran_n 1: one scale per column, e.g. per-token B scales) the K block's column scales are
// staged once per tile and applied by a vector multiply.
#pragma once

#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"

namespace deepgemm_ascend::kernel {

// acc[r, :cols] += product j [r, :cols] * sa(m, kb + j) * sb(n0 + c, kb + j) for the Blocks K blocks from
// kb, one segment of constant sb at a time.
template <class VTarget, int Blocks>
DGA_DEVICE void promote_row(typename VTarget::Promotion& promo, const block::Scaling& s, int64_t r, int64_t m,
                            int64_t n0, int64_t cols, int64_t kb) {
  float fa[Blocks], f[Blocks];
  for (int j = 0; j < Blocks; ++j) fa[j] = VTarget::scale(s.a, m, kb + j);
  for (int64_t c = 0; c < cols;) {
    const int64_t end = layout::imin(cols, (n0 + c) / s.b.gran_mn * s.b.gran_mn + s.b.gran_mn - n0);
    for (int j = 0; j < Blocks; ++j) f[j] = fa[j] * VTarget::scale(s.b, n0 + c, kb + j);
    promo.template axpy<Blocks>(r, c, end, f);
    c = end;
  }
}

// The rows' promotion of the Blocks K blocks from kb (received, released after).
template <class VTarget, int Blocks>
DGA_DEVICE void promote_blocks(typename VTarget::Promotion& promo, const block::Scaling& s, int64_t m0, int64_t rows,
                               int64_t n0, int64_t cols, int64_t kb) {
  for (int j = 0; j < Blocks; ++j) promo.receive(j);
  for (int64_t r = 0; r < rows; ++r) promote_row<VTarget, Blocks>(promo, s, r, m0 + r, n0, cols, kb);
  for (int j = 0; j < Blocks; ++j) promo.release();
}

template <class VTarget, class Tiling, class Problems>
DGA_DEVICE void gemm_promotion(typename VTarget::Ctx& ctx, const GemmArgs& args, const Tiling& t,
                               const Problems& problems, int64_t promote_k) {
  typename VTarget::Promotion promo(ctx, t.block_m, t.block_n);
  const int64_t sub = VTarget::sub_idx(ctx);
  block::TileWalk walk(t.block_m, t.block_n, args.config.swizzle, VTarget::group_idx(ctx), VTarget::group_num(ctx));
  for (int64_t p = 0; p < problems.count(); ++p) {
    const GemmProblem pr = problems.get(p);
    const bool per_column = pr.scaling.b.gran_mn % VTarget::kScaleRun != 0;
    for (walk.begin(pr.a.rows, pr.b.rows); walk.more(); walk.next()) {
      const block::TileSpan sp = walk.span();
      const block::RowRange mine = block::vector_core_rows(sp.rows, sub);
      const int64_t r0 = mine.begin, rows = mine.end - mine.begin;
      promo.begin_tile();
      const int64_t blocks = layout::ceil_div(pr.a.cols, promote_k);
      for (int64_t kb = 0; kb < blocks;) {
        if (per_column) {
          promo.receive(0);
          promo.stage_column_scales(pr.scaling.b, sp.n0, sp.cols, kb);
          for (int64_t r = 0; r < rows; ++r)
            promo.axpy_columns(r, sp.cols, VTarget::scale(pr.scaling.a, sp.m0 + r0 + r, kb));
          promo.release_column_scales();
          promo.release();
          kb += 1;
        } else if (kb + 1 < blocks) {
          promote_blocks<VTarget, 2>(promo, pr.scaling, sp.m0 + r0, rows, sp.n0, sp.cols, kb);
          kb += 2;
        } else {
          promote_blocks<VTarget, 1>(promo, pr.scaling, sp.m0 + r0, rows, sp.n0, sp.cols, kb);
          kb += 1;
        }
      }
      promo.store(pr.epilogue.d.block(sp.m0 + r0, sp.n0, rows, sp.cols), pr.epilogue.d_dtype, pr.epilogue.has_c);
    }
  }
}

}  // namespace deepgemm_ascend::kernel
