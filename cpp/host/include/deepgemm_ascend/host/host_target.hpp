// The host target of the shared kernel templates (block/, kernel/): the checked tile machine. A
// target supplies the core context, the local tile type, the stage ring over events and the
// primitives; the NPU target (cpp/npu/npu_target.hpp) supplies the same over AscendC.
//
// Every primitive receives both the valid extent (rows, cols, k) and the padded geometry: the host
// works on padded tiles (zeros in the padding), the NPU instructions take the valid sizes.
#pragma once

#include "deepgemm_ascend/host/primitives.hpp"
#include "deepgemm_ascend/tile/promotion.hpp"
#include "deepgemm_ascend/host/stage_ring.hpp"

namespace deepgemm_ascend::tile::host {

struct HostTarget {
  using Ctx = Core;
  using Tile = LocalTile;
  // The host cube has no MX unit: scaled operands are promoted per K block (Promotion), and it multiplies
  // bf16, so every operand is widened to 16 bits in L0.
  static constexpr bool kMxScales = false;
  static constexpr bool kMxHandOff = false;  // (NPU: MX products handed to the vector cores)
  static constexpr int l0_bits(OperandFormat) { return 16; }

  // Producer and consumer pipes are template arguments because the NPU takes event ids per
  // compile-time event type; the host checks them at run time.
  template <int N, Pipe Producer, Pipe Consumer, int Parts = 1>
  struct Ring : StageRing<N, Parts> {
    Ring(Core& core, const RingPart (&parts)[Parts], const char* name)
        : StageRing<N, Parts>(core, parts, Producer, Consumer, name) {}
  };

  static int block_idx(const Core& core) { return core.block_idx(); }
  static int block_num(const Core& core) { return core.block_num(); }
  static Tile sub(const Tile& t, uint32_t offset, uint32_t bytes) { return t.sub(offset, bytes); }

  static void copy_gm_to_l1(Core& core, const Tile& dst, const layout::NzGeometry& g, const layout::MatrixRef& src) {
    tile::host::copy_gm_to_l1(core, dst, g, src);
  }
  // B's tile: in L1 as K-pair panels (host/pair_panels.hpp), so that the L0B load needs no transpose.
  static void copy_gm_to_l1b(Core& core, const Tile& dst, const layout::NzGeometry& g, const layout::MatrixRef& src) {
    tile::host::copy_gm_to_l1b(core, dst, g, src);
  }
  // Columns [k_off, k_off + k) of the L1 tile (geometry src_g, `rows` valid rows) into L0A / L0B;
  // k is a multiple of the cube block. With `fold` (block::Scaling::fold), the step's power-of-two scales are
  // folded into the widened values (host/scale_fold.hpp) and mmad gets no promotion.
  static void load_l1_to_l0a(Core& core, const Tile& dst, const Tile& src, const layout::NzGeometry& src_g,
                             int64_t rows, int64_t k_off, int64_t k, OperandFormat fmt, const Promotion* fold) {
    tile::host::load_l1_to_l0a(core, dst, src, src_g, k_off, k, fmt,
                         fold ? FoldScales{fold->a, fold->m0, rows, fold->k} : FoldScales{});
  }
  static void load_l1_to_l0b(Core& core, const Tile& dst, const Tile& src, const layout::NzGeometry& src_g,
                             int64_t cols, int64_t k_off, int64_t k, OperandFormat fmt, const Promotion* fold) {
    tile::host::load_l1_to_l0b(core, dst, {k, layout::align_up(cols, kCubeBlock)}, src, src_g, k_off, fmt,
                         fold ? FoldScales{fold->b, fold->n0, cols, fold->k} : FoldScales{});
  }
  // L0C (=|+=) L0A x L0B over k; with `promo`, the product is scaled per row and column first. (`last`, the
  // tile's last product, orders the NPU's L0C; the host's calls run in order.)
  static void mmad(Core& core, const Tile& c, const L0CGeometry& c_g, const Tile& a, const Tile& b, int64_t rows,
                   int64_t cols, int64_t k, bool init, const Promotion* promo, bool /*last*/ = false) {
    if (!promo) return tile::host::mmad(core, c, c_g, a, b, k, init);
    float* row = core.scratch(size_t(c_g.m_pad + c_g.n_pad));
    float* col = row + c_g.m_pad;
    // Padding rows and columns get 0.
    for (int64_t m = 0; m < c_g.m_pad; ++m) row[m] = m < rows ? promo->a->at(promo->m0 + m, promo->k / promo->a->gran_k) : 0.0f;
    for (int64_t n = 0; n < c_g.n_pad; ++n) col[n] = n < cols ? promo->b->at(promo->n0 + n, promo->k / promo->b->gran_k) : 0.0f;
    tile::host::mmad(core, c, c_g, a, b, k, init, row, col);
  }
  static void fixpipe(Core& core, const FixpipeDst& dst, const Tile& c, const L0CGeometry& c_g) {
    tile::host::fixpipe(core, dst, c, c_g);
  }
};

}  // namespace deepgemm_ascend::tile::host
