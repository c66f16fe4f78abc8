// BlockMmad<Target>: accumulates one (block_m x block_n) tile of A x B^T over all of K into L0C.
// One source for both targets (host/host_target.hpp, cpp/npu/npu_target.hpp): no heap, no
// std containers, no exceptions.
//
// A is the [rows, K] slice of the logical [M, K] operand, B the [cols, K] slice of the logical
// [N, K] operand; both may have any strides (the GM->L1 copy reads ND or DN) and any operand format
// (bf16, fp8, packed fp4: L1 holds the codes as they are, B in the target's L1 format of B). K is walked
// in block_k steps through an L1 ring (the next step is copied in before the current one is used), and
// each L1 step in l0_k steps through one L0 ring whose stages hold the L0A and the L0B operand of one Mmad.
//
// Scaled operands take one of three paths, chosen by the target and the scales:
//  * promotion (the host cube): every l0_k step is one promotion block; its product is scaled by the
//    block's row and column scales and added to the fp32 accumulator;
//  * folding (the host cube, Scaling::fold: every scale an exact power of two): the L0 loads multiply the
//    widened values by their scales exactly, and the steps accumulate unpromoted, as for an unscaled GEMM;
//  * MX scales (Target::kMxScales, the 950's MX cube): the UE8M0 scale pairs of the step travel GM -> L1
//    in the same stage as the operands and L1 -> L0A_MX / L0B_MX with them, and the cube applies them.
#pragma once

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/macros.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/kernel/tiling.hpp"
#include "deepgemm_ascend/layout/scale_ref.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/operand.hpp"
#include "deepgemm_ascend/tile/pipe.hpp"
#include "deepgemm_ascend/tile/promotion.hpp"

namespace deepgemm_ascend::block {

struct Operands {
  tile::OperandFormat a = tile::OperandFormat::kBF16;
  tile::OperandFormat b = tile::OperandFormat::kBF16;
  bool second_b = false;  // unscaled: each tile also multiplies A by a second B (operator()'s b2)
};

// Per-K-block scales; `enabled` false for unscaled GEMMs.
struct Scaling {
  bool enabled = false;
  layout::ScaleRef a;  // indexed by global row of A (M) and K block
  layout::ScaleRef b;  // indexed by global row of B (N) and K block
  // Host: every scale is an exact power of two (layout/scale_fold.hpp); the L0 loads fold them into the
  // widened values and no product is promoted. Never set for the NPU, whose MX cube does this itself.
  bool fold = false;
};

using Mx = arch::MxFormat;

// The L1 and L0 tiles of one K step for `ops` (kernel/tiling.hpp's carving, with the target's L0 widths).
template <class Target, class Tiling>
DGA_DEVICE kernel::Carving carving_of(const Tiling& t, const Operands& ops) {
  return kernel::carving(t, {tile::operand_bits(ops.a), tile::operand_bits(ops.b), Target::l0_bits(ops.a),
                             Target::l0_bits(ops.b), Target::kMxScales, ops.second_b});
}

// The stages of a target's L1 ring: its kL1Stages, or kernel::kL1Stages (C++17: the NPU sources' dialect).
template <class Target, class = void>
struct L1StagesOf {
  static constexpr int value = kernel::kL1Stages;
};
template <class Target>
struct L1StagesOf<Target, decltype(void(Target::kL1Stages))> {
  static constexpr int value = Target::kL1Stages;
};
// The stages of a target's L0C ring (kernel/gemm.hpp): its kL0CStages, or one.
template <class Target, class = void>
struct L0CStagesOf {
  static constexpr int value = 1;
};
template <class Target>
struct L0CStagesOf<Target, decltype(void(Target::kL0CStages))> {
  static constexpr int value = Target::kL0CStages;
};

// Tiling: kernel::GemmTiling (run-time config) or a kernel::StaticTiling (compile-time).
template <class Target, class Tiling = kernel::GemmTiling>
class BlockMmad {
  using Ctx = typename Target::Ctx;
  using Tile = typename Target::Tile;
  using L1Ring = typename Target::template Ring<L1StagesOf<Target>::value, tile::Pipe::kMTE2, tile::Pipe::kMTE1>;
  static constexpr bool kPrefetch = L1Ring::kStages > 1;
  using L0Ring = typename Target::template Ring<kernel::kL0Stages, tile::Pipe::kMTE1, tile::Pipe::kM, 2>;
  static constexpr bool kMx = Target::kMxScales;
  // K granule of an L0 step: the cube block, or a whole pair of MX scale blocks.
  static constexpr int64_t kKGranule = kMx ? int64_t(Mx::kMxBaseK) : int64_t(tile::kCubeBlock);

 public:
  DGA_DEVICE BlockMmad(Ctx& ctx, const Tiling& t, const Operands& ops)
      : ctx_(ctx),
        t_(t),
        ops_(ops),
        carve_(carving_of<Target>(t, ops)),
        l1_(ctx, {{tile::Pos::kL1, uint32_t(carve_.l1_stage())}}, "l1"),
        l0_(ctx, {{tile::Pos::kL0A, uint32_t(carve_.l0a)}, {tile::Pos::kL0B, uint32_t(carve_.l0b)}}, "l0") {}

  // l0c must hold an align16(a.rows) x align16(b.rows) fp32 tile; m0 / n0 are the rows of a and b in
  // the scale tensors of `scaling` (ignored when not enabled; required with MX scales). b2 (Operands::
  // second_b, unscaled): a second B of b's shape; the tile is a b^T + a b2^T, each K step of A copied once.
  DGA_DEVICE void operator()(const layout::MatrixRef& a, const layout::MatrixRef& b, const Scaling& scaling,
                             int64_t m0, int64_t n0, const Tile& l0c, const tile::L0CGeometry& c_g,
                             const layout::MatrixRef* b2 = nullptr) {
    const Tile_ cur{.a = a, .b = b, .scaling = scaling, .m0 = m0, .n0 = n0, .l0c = l0c, .c_g = c_g, .b2 = b2};
    L1Step next = issue_l1(cur, 0);
    for (int64_t k0 = 0; k0 < a.cols; k0 += t_.block_k) {
      const L1Step step = next;
      const bool more = k0 + t_.block_k < a.cols;
      // Prefetch: the next K step goes GM -> L1 before the current one is computed (into another stage);
      // a ring of one stage loads it once the current one is released.
      if (kPrefetch && more) next = issue_l1(cur, k0 + t_.block_k);
      compute_l1(cur, step, l1_.consume(), k0 == 0);
      l1_.release();
      if (!kPrefetch && more) next = issue_l1(cur, k0 + t_.block_k);
    }
  }

 private:
  struct Tile_ {  // the output tile in progress
    const layout::MatrixRef& a;
    const layout::MatrixRef& b;
    const Scaling& scaling;
    int64_t m0, n0;
    const Tile& l0c;
    const tile::L0CGeometry& c_g;
    const layout::MatrixRef* b2;
  };
  struct L1Step {
    layout::NzGeometry a_g, b_g;
    int64_t k0;
  };

  DGA_DEVICE L1Step issue_l1(const Tile_& c, int64_t k0) {
    const int64_t kn = layout::imin(t_.block_k, c.a.cols - k0);
    L1Step s{layout::NzGeometry::fit(c.a.rows, kn, c.a.bits), layout::NzGeometry::fit(c.b.rows, kn, c.b.bits), k0};
    // Both operands share one stage and one K walk, so they are padded to the same K.
    s.a_g.cols_pad = s.b_g.cols_pad = layout::imax(s.a_g.cols_pad, s.b_g.cols_pad);
    const Tile& l1 = l1_.acquire();
    Target::copy_gm_to_l1(ctx_, l1_a(l1), s.a_g, c.a.block(0, k0, c.a.rows, kn));
    Target::copy_gm_to_l1b(ctx_, l1_b(l1), s.b_g, c.b.block(0, k0, c.b.rows, kn));
    if (c.b2 != nullptr) Target::copy_gm_to_l1b(ctx_, l1_b2(l1), s.b_g, c.b2->block(0, k0, c.b2->rows, kn));
    if constexpr (kMx) {
      const int64_t pairs = layout::ceil_div(kn, int64_t(Mx::kMxBaseK)), kb = k0 / Mx::kMxBlockK;
      Target::copy_scales_gm_to_l1(ctx_, scales_a(l1), l1_pairs(), c.scaling.a.shifted(c.m0, kb), c.a.rows, pairs);
      Target::copy_scales_gm_to_l1(ctx_, scales_b(l1), l1_pairs(), c.scaling.b.shifted(c.n0, kb), c.b.rows, pairs);
    }
    l1_.commit();
    return s;
  }

  // The parts of an L1 stage, as carved: the A tile, the B tile, (MX) the scale tiles of A and of B.
  DGA_DEVICE Tile l1_a(const Tile& l1) const { return Target::sub(l1, 0, uint32_t(carve_.l1_a)); }
  DGA_DEVICE Tile l1_b(const Tile& l1) const { return Target::sub(l1, uint32_t(carve_.l1_a), uint32_t(carve_.l1_b)); }
  DGA_DEVICE Tile scales_a(const Tile& l1) const {
    return Target::sub(l1, uint32_t(carve_.l1_a + carve_.l1_b), uint32_t(carve_.l1_sa));
  }
  DGA_DEVICE Tile scales_b(const Tile& l1) const {
    return Target::sub(l1, uint32_t(carve_.l1_a + carve_.l1_b + carve_.l1_sa), uint32_t(carve_.l1_sb));
  }
  DGA_DEVICE Tile l1_b2(const Tile& l1) const {
    return Target::sub(l1, uint32_t(carve_.l1_stage() - carve_.l1_b2), uint32_t(carve_.l1_b2));
  }
  // MX: the scale pairs along K each scale tile holds per 16-row block.
  DGA_DEVICE int64_t l1_pairs() const { return layout::ceil_div(int64_t(t_.block_k), int64_t(Mx::kMxBaseK)); }

  // Columns [k, k + kp) of the step's A and B into an L0 stage (with their MX scales, or folding the scales
  // of `fold`).
  DGA_DEVICE void load_l0(const Tile_& c, const L1Step& s, const Tile& l1, const Tile& l1a, const Tile& l1b,
                          const Tile& l0a, const Tile& l0b, int64_t k, int64_t kp, const tile::Promotion* fold) {
    if constexpr (kMx) {
      Target::load_l1_to_l0_mx(ctx_, l0a, l1a, s.a_g, scales_a(l1), l1_pairs(), c.a.rows, k, kp);
      Target::load_l1_to_l0_mx(ctx_, l0b, l1b, s.b_g, scales_b(l1), l1_pairs(), c.b.rows, k, kp);
    } else {
      Target::load_l1_to_l0a(ctx_, l0a, l1a, s.a_g, c.a.rows, k, kp, ops_.a, fold);
      Target::load_l1_to_l0b(ctx_, l0b, l1b, s.b_g, c.b.rows, k, kp, ops_.b, fold);
    }
  }

  DGA_DEVICE void compute_l1(const Tile_& c, const L1Step& s, const Tile& l1, bool first) {
    const Tile l1a = l1_a(l1), l1b = l1_b(l1);
    // Valid K of this step rounded to the K granule: padding beyond it is zero and need not be multiplied.
    const int64_t k_end = layout::align_up(layout::imin(t_.block_k, c.a.cols - s.k0), kKGranule);
    for (int64_t k = 0; k < k_end; k += t_.l0_k) {
      const int64_t kp = layout::imin(t_.l0_k, k_end - k);
      const tile::Promotion promo{&c.scaling.a, &c.scaling.b, c.m0, c.n0, s.k0 + k};
      const bool fold = c.scaling.enabled && c.scaling.fold;
      const auto& w = l0_.acquire();
      load_l0(c, s, l1, l1a, l1b, w.part[0], w.part[1], k, kp, fold ? &promo : nullptr);
      l0_.commit();
      const auto& r = l0_.consume();
      // Promoted: every step's product; MX hand-off: the product after the tile's last step; folded: none.
      const bool last = s.k0 + t_.block_k >= c.a.cols && k + kp >= k_end;
      const bool hand = c.scaling.enabled && !fold && (kMx ? Target::kMxHandOff && last : true);
      Target::mmad(ctx_, c.l0c, c.c_g, r.part[0], r.part[1], c.a.rows, c.b.rows, kp, first && k == 0,
                   hand ? &promo : nullptr, last && c.b2 == nullptr);
      l0_.release();
      if (c.b2 != nullptr) mmad_second_b(c, s, l1, l1a, k, kp, last);
    }
  }

  // The second B's product of the L0 step [k, k + kp), added to the tile (A's step loaded into L0A again).
  DGA_DEVICE void mmad_second_b(const Tile_& c, const L1Step& s, const Tile& l1, const Tile& l1a, int64_t k,
                                int64_t kp, bool last) {
    if constexpr (!kMx) {  // unscaled operands only
      const auto& w = l0_.acquire();
      Target::load_l1_to_l0a(ctx_, w.part[0], l1a, s.a_g, c.a.rows, k, kp, ops_.a, nullptr);
      Target::load_l1_to_l0b(ctx_, w.part[1], l1_b2(l1), s.b_g, c.b.rows, k, kp, ops_.b, nullptr);
      l0_.commit();
      const auto& r = l0_.consume();
      Target::mmad(ctx_, c.l0c, c.c_g, r.part[0], r.part[1], c.a.rows, c.b.rows, kp, false, nullptr, last);
      l0_.release();
    }
  }

  Ctx& ctx_;
  Tiling t_;
  Operands ops_;
  kernel::Carving carve_;
  L1Ring l1_;
  L0Ring l0_;
};

}  // namespace deepgemm_ascend::block
