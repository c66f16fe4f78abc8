#include "deepgemm_ascend/block/block_mmad.hpp"

#include <algorithm>

namespace deepgemm_ascend::block {

using layout::align_up;
using layout::NzGeometry;
using tile::Pipe;
using tile::Pos;

namespace {
constexpr int kL0Bits = 16;  // host cube operands are bf16

uint32_t l1_stage_bytes(const heuristics::GemmTiling& t, int a_bits, int b_bits, uint32_t* a_bytes) {
  *a_bytes = uint32_t(NzGeometry::fit(t.block_m, t.block_k, a_bits).bytes());
  return *a_bytes + uint32_t(NzGeometry::fit(t.block_n, t.block_k, b_bits).bytes());
}
uint32_t l0_bytes(int64_t rows, int64_t k) { return uint32_t(align_up(rows, tile::kCubeBlock) * k * kL0Bits / 8); }
}  // namespace

BlockMmad::BlockMmad(tile::Core& core, const heuristics::GemmTiling& t, int a_bits, int b_bits)
    : core_(core),
      t_(t),
      a_bits_(a_bits),
      b_bits_(b_bits),
      l1_(core, Pos::kL1, l1_stage_bytes(t, a_bits, b_bits, &l1_a_bytes_), Pipe::kMTE2, Pipe::kMTE1, "l1"),
      l0a_(core, Pos::kL0A, l0_bytes(t.block_m, t.l0_k), Pipe::kMTE1, Pipe::kM, "l0a"),
      l0b_(core, Pos::kL0B, l0_bytes(t.block_n, t.l0_k), Pipe::kMTE1, Pipe::kM, "l0b") {}

BlockMmad::L1Step BlockMmad::issue_l1(const layout::MatrixRef& a, const layout::MatrixRef& b, int64_t k0) {
  const int64_t kn = std::min(t_.block_k, a.cols - k0);
  L1Step s{NzGeometry::fit(a.rows, kn, a_bits_), NzGeometry::fit(b.rows, kn, b_bits_)};
  // Both operands share one stage, so they are padded to the same K.
  s.a_g.cols_pad = s.b_g.cols_pad = std::max(s.a_g.cols_pad, s.b_g.cols_pad);
  const tile::LocalTile& l1 = l1_.acquire();
  tile::copy_gm_to_l1(core_, l1.sub(0, l1_a_bytes_), s.a_g, a.block(0, k0, a.rows, kn));
  tile::copy_gm_to_l1(core_, l1.sub(l1_a_bytes_, l1.bytes - l1_a_bytes_), s.b_g, b.block(0, k0, b.rows, kn));
  l1_.commit();
  return s;
}

void BlockMmad::compute_l1(const L1Step& s, const tile::LocalTile& l1, const tile::LocalTile& l0c,
                           const tile::L0CGeometry& c_g, bool first) {
  const tile::LocalTile l1a = l1.sub(0, l1_a_bytes_), l1b = l1.sub(l1_a_bytes_, l1.bytes - l1_a_bytes_);
  for (int64_t k = 0; k < s.a_g.cols_pad; k += t_.l0_k) {
    const int64_t kp = std::min(t_.l0_k, s.a_g.cols_pad - k);
    tile::load_l1_to_l0a(core_, l0a_.acquire(), l1a, s.a_g, k, kp);
    l0a_.commit();
    tile::load_l1_to_l0b(core_, l0b_.acquire(), {kp, c_g.n_pad}, l1b, s.b_g, k);
    l0b_.commit();
    const tile::LocalTile& a0 = l0a_.consume();
    const tile::LocalTile& b0 = l0b_.consume();
    tile::mmad(core_, l0c, c_g, a0, b0, kp, first && k == 0);
    l0a_.release();
    l0b_.release();
  }
}

void BlockMmad::operator()(const layout::MatrixRef& a, const layout::MatrixRef& b, const tile::LocalTile& l0c,
                           const tile::L0CGeometry& c_g) {
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
