#include "deepgemm_ascend/block/block_mmad.hpp"

#include <algorithm>

namespace deepgemm_ascend::block {

using layout::align_up;
using layout::NzGeometry;
using tile::Pipe;
using tile::Pos;

namespace {
constexpr int kL0Bits = 16;  // host cube operands are bf16

uint32_t l1_stage_bytes(const heuristics::GemmTiling& t, const Operands& ops, uint32_t* a_bytes) {
  *a_bytes = uint32_t(NzGeometry::fit(t.block_m, t.block_k, tile::operand_bits(ops.a)).bytes());
  return *a_bytes + uint32_t(NzGeometry::fit(t.block_n, t.block_k, tile::operand_bits(ops.b)).bytes());
}
uint32_t l0_bytes(int64_t rows, int64_t k) { return uint32_t(align_up(rows, tile::kCubeBlock) * k * kL0Bits / 8); }
}  // namespace

BlockMmad::BlockMmad(tile::Core& core, const heuristics::GemmTiling& t, const Operands& ops, bool scaled)
    : core_(core),
      t_(t),
      ops_(ops),
      l1_(core, Pos::kL1, l1_stage_bytes(t, ops, &l1_a_bytes_), Pipe::kMTE2, Pipe::kMTE1, "l1"),
      l0a_(core, Pos::kL0A, l0_bytes(t.block_m, t.l0_k), Pipe::kMTE1, Pipe::kM, "l0a"),
      l0b_(core, Pos::kL0B, l0_bytes(t.block_n, t.l0_k), Pipe::kMTE1, Pipe::kM, "l0b") {
  if (scaled) {
    row_scale_.resize(size_t(t.block_m));
    col_scale_.resize(size_t(t.block_n));
  }
}

BlockMmad::L1Step BlockMmad::issue_l1(const layout::MatrixRef& a, const layout::MatrixRef& b, int64_t k0) {
  const int64_t kn = std::min(t_.block_k, a.cols - k0);
  L1Step s{NzGeometry::fit(a.rows, kn, a.bits), NzGeometry::fit(b.rows, kn, b.bits), k0};
  // Both operands share one stage and one K walk, so they are padded to the same K.
  s.a_g.cols_pad = s.b_g.cols_pad = std::max(s.a_g.cols_pad, s.b_g.cols_pad);
  const tile::LocalTile& l1 = l1_.acquire();
  tile::copy_gm_to_l1(core_, l1.sub(0, l1_a_bytes_), s.a_g, a.block(0, k0, a.rows, kn));
  tile::copy_gm_to_l1(core_, l1.sub(l1_a_bytes_, l1.bytes - l1_a_bytes_), s.b_g, b.block(0, k0, b.rows, kn));
  l1_.commit();
  return s;
}

void BlockMmad::gather_scales(int64_t k, const tile::L0CGeometry& c_g) {
  // Scales of the K block starting at global column k; padding rows and columns get 0.
  for (int64_t m = 0; m < c_g.m_pad; ++m)
    row_scale_[size_t(m)] = m < rows_ ? scaling_.a.at(m0_ + m, k / scaling_.a.gran_k) : 0.0f;
  for (int64_t n = 0; n < c_g.n_pad; ++n)
    col_scale_[size_t(n)] = n < cols_ ? scaling_.b.at(n0_ + n, k / scaling_.b.gran_k) : 0.0f;
}

void BlockMmad::compute_l1(const L1Step& s, const tile::LocalTile& l1, const tile::LocalTile& l0c,
                           const tile::L0CGeometry& c_g, bool first) {
  const tile::LocalTile l1a = l1.sub(0, l1_a_bytes_), l1b = l1.sub(l1_a_bytes_, l1.bytes - l1_a_bytes_);
  // Valid K of this step rounded to the cube block: padding beyond it is zero and need not be multiplied.
  const int64_t k_end = align_up(std::min(t_.block_k, s.a_g.cols_pad), tile::kCubeBlock);
  for (int64_t k = 0; k < k_end; k += t_.l0_k) {
    const int64_t kp = std::min(t_.l0_k, k_end - k);
    tile::load_l1_to_l0a(core_, l0a_.acquire(), l1a, s.a_g, k, kp, ops_.a);
    l0a_.commit();
    tile::load_l1_to_l0b(core_, l0b_.acquire(), {kp, c_g.n_pad}, l1b, s.b_g, k, ops_.b);
    l0b_.commit();
    const tile::LocalTile& a0 = l0a_.consume();
    const tile::LocalTile& b0 = l0b_.consume();
    if (scaling_.enabled) {
      gather_scales(s.k0 + k, c_g);
      tile::mmad(core_, l0c, c_g, a0, b0, kp, first && k == 0, row_scale_.data(), col_scale_.data());
    } else {
      tile::mmad(core_, l0c, c_g, a0, b0, kp, first && k == 0);
    }
    l0a_.release();
    l0b_.release();
  }
}

void BlockMmad::operator()(const layout::MatrixRef& a, const layout::MatrixRef& b, const Scaling& scaling,
                           int64_t m0, int64_t n0, const tile::LocalTile& l0c, const tile::L0CGeometry& c_g) {
  scaling_ = scaling;
  if (scaling_.enabled && row_scale_.empty())
    core_.violation("BlockMmad built for unscaled operands was given scales");
  rows_ = a.rows;
  cols_ = b.rows;
  m0_ = m0;
  n0_ = n0;
  const int64_t k_total = a.cols;
  L1Step next = issue_l1(a, b, 0);
  for (int64_t k0 = 0; k0 < k_total; k0 += t_.block_k) {
    const L1Step cur = next;
    // Prefetch: the next K step goes GM -> L1 before the current one is computed.
    if (k0 + t_.block_k < k_total) next = issue_l1(a, b, k0 + t_.block_k);
    const tile::LocalTile& l1 = l1_.consume();
    compute_l1(cur, l1, l0c, c_g, k0 == 0);
    l1_.release();
  }
}

}  // namespace deepgemm_ascend::block
