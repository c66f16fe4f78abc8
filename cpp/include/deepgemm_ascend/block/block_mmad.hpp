// BlockMmad: accumulates one (block_m x block_n) tile of A x B^T over all of K into L0C.
//
// A is the [rows, K] slice of the logical [M, K] operand, B the [cols, K] slice of the logical
// [N, K] operand; both may have any strides (the GM->L1 copy reads ND or DN). K is walked in
// block_k steps through an L1 ring (the next step is copied in before the current one is used),
// and each L1 step in l0_k steps through L0A / L0B rings.
#pragma once

#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/tile/primitives.hpp"
#include "deepgemm_ascend/tile/stage_ring.hpp"

namespace deepgemm_ascend::block {

class BlockMmad {
 public:
  static constexpr int kL1Stages = 2;
  static constexpr int kL0Stages = 2;

  BlockMmad(tile::Core& core, const heuristics::GemmTiling& t, int a_bits, int b_bits);

  // l0c must hold an align16(a.rows) x align16(b.rows) fp32 tile.
  void operator()(const layout::MatrixRef& a, const layout::MatrixRef& b, const tile::LocalTile& l0c,
                  const tile::L0CGeometry& c_g);

 private:
  struct L1Step {
    layout::NzGeometry a_g, b_g;
  };
  L1Step issue_l1(const layout::MatrixRef& a, const layout::MatrixRef& b, int64_t k0);
  void compute_l1(const L1Step& s, const tile::LocalTile& l1, const tile::LocalTile& l0c,
                  const tile::L0CGeometry& c_g, bool first);

  tile::Core& core_;
  heuristics::GemmTiling t_;
  int a_bits_, b_bits_;
  uint32_t l1_a_bytes_;
  tile::StageRing<kL1Stages> l1_;
  tile::StageRing<kL0Stages> l0a_;
  tile::StageRing<kL0Stages> l0b_;
};

}  // namespace deepgemm_ascend::block
