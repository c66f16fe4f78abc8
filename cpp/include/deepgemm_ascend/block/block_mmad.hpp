// BlockMmad: accumulates one (block_m x block_n) tile of A x B^T over all of K into L0C.
//
// A is the [rows, K] slice of the logical [M, K] operand, B the [cols, K] slice of the logical
// [N, K] operand; both may have any strides (the GM->L1 copy reads ND or DN) and any operand format
// (bf16, fp8, packed fp4: L1 holds them as they are, the L1->L0 loads widen to bf16). K is walked in
// block_k steps through an L1 ring (the next step is copied in before the current one is used), and
// each L1 step in l0_k steps through L0A / L0B rings.
//
// With scaled operands every l0_k step is one promotion block: its product is scaled by the block's
// row and column scales and added to the fp32 accumulator inside the mmad.
#pragma once

#include <vector>

#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/layout/scale_ref.hpp"
#include "deepgemm_ascend/tile/primitives.hpp"
#include "deepgemm_ascend/tile/stage_ring.hpp"

namespace deepgemm_ascend::block {

struct Operands {
  tile::OperandFormat a = tile::OperandFormat::kBF16;
  tile::OperandFormat b = tile::OperandFormat::kBF16;
};

// Per-K-block scales; `enabled` false for unscaled GEMMs.
struct Scaling {
  bool enabled = false;
  layout::ScaleRef a;  // indexed by global row of A (M) and K block
  layout::ScaleRef b;  // indexed by global row of B (N) and K block
};

class BlockMmad {
 public:
  static constexpr int kL1Stages = 2;
  static constexpr int kL0Stages = 2;

  BlockMmad(tile::Core& core, const heuristics::GemmTiling& t, const Operands& ops, bool scaled);

  // l0c must hold an align16(a.rows) x align16(b.rows) fp32 tile; m0 / n0 are the rows of a and b in
  // the scale tensors of `scaling` (ignored when not enabled).
  void operator()(const layout::MatrixRef& a, const layout::MatrixRef& b, const Scaling& scaling, int64_t m0,
                  int64_t n0, const tile::LocalTile& l0c, const tile::L0CGeometry& c_g);

 private:
  struct L1Step {
    layout::NzGeometry a_g, b_g;
    int64_t k0;
  };
  L1Step issue_l1(const layout::MatrixRef& a, const layout::MatrixRef& b, int64_t k0);
  void compute_l1(const L1Step& s, const tile::LocalTile& l1, const tile::LocalTile& l0c,
                  const tile::L0CGeometry& c_g, bool first);
  void gather_scales(int64_t k, const tile::L0CGeometry& c_g);

  tile::Core& core_;
  heuristics::GemmTiling t_;
  Operands ops_;
  Scaling scaling_;  // of the tile in progress
  uint32_t l1_a_bytes_;
  tile::StageRing<kL1Stages> l1_;
  tile::StageRing<kL0Stages> l0a_;
  tile::StageRing<kL0Stages> l0b_;
  int64_t rows_ = 0, cols_ = 0, m0_ = 0, n0_ = 0;
  std::vector<float> row_scale_, col_scale_;
};

}  // namespace deepgemm_ascend::block
