#include "deepgemm_ascend/host/scale_fold.hpp"

#include <algorithm>
#include <vector>

#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/pair_panels.hpp"
#include "deepgemm_ascend/host/widen.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

using layout::fold_step;
constexpr uint16_t kField = layout::kBf16ExponentField;
constexpr int64_t kPairRow = kCubeBlock * kKPair;  // L0B: the values of one K pair across 16 columns

// Zero, NaN and Inf keep their codes; branch-free so that the loops below vectorise.
inline uint16_t folded(uint16_t x, uint16_t step) {
  const uint16_t field = x & kField;
  return uint16_t(x + (step & uint16_t(-uint16_t(field != 0 && field != kField))));
}

// The second pass where the ISA has no fused widening (host::widen_fold_fn), in vector clones
// (core/macros.hpp). Rows rows of 16 values, row_stride apart, row r taking step[r].
DGA_VECTOR_CLONES void fold_rows(uint16_t* __restrict v, int64_t row_stride, int64_t rows,
                                 const uint16_t* __restrict step) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < kCubeBlock; ++i) v[r * row_stride + i] = folded(v[r * row_stride + i], step[r]);
}

// n values (a multiple of kPairRow), value i taking step[i % kPairRow].
DGA_VECTOR_CLONES void fold_pairs(uint16_t* __restrict v, int64_t n, const uint16_t* __restrict step) {
  for (int64_t i = 0; i < n; i += kPairRow)
    for (int64_t j = 0; j < kPairRow; ++j) v[i + j] = folded(v[i + j], step[j]);
}

// 16-value rows (`rows`, in_stride bytes and out_stride values apart) widened, then folded.
void widen_fold(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                int64_t out_stride, const uint16_t* step, bool per_row) {
  static_assert(kWidenRun == kCubeBlock, "a widened row is a fractal row");
  const host::WidenFoldFn fused = host::widen_fold_fn();
  if (fused && operand_bits(fmt) == 8) return fused(fmt, in, in_stride, rows, out, out_stride, step, per_row);
  widen_rows(fmt, in, in_stride, rows, out, out_stride);
  if (per_row) fold_rows(out, out_stride, rows, step);
  else fold_pairs(out, rows * kWidenRun, step);  // (out_stride == 16: a contiguous run)
}

// The fold steps of tile rows [r0, r0 + n) for K block kb: row r0 + i's in step[i * spread, (i + 1) * spread),
// 0 from row f.rows on (padding). The scales are read as stored, with no division per row (ScaleRef::at per row
// cost several times the widening itself).
void fold_steps(const FoldScales& f, int64_t kb, int64_t r0, int64_t n, uint16_t* step, int spread) {
  const layout::ScaleRef& s = *f.s;
  const int64_t valid = std::clamp<int64_t>(f.rows - r0, 0, n);
  int64_t row = (f.row0 + r0) / s.gran_mn, in_row = (f.row0 + r0) % s.gran_mn;
  const auto* codes =
      s.ue8m0 ? static_cast<const uint8_t*>(s.base) + (kb / s.pack) * s.k_stride + kb % s.pack : nullptr;
  const float* values = s.ue8m0 ? nullptr : static_cast<const float*>(s.base) + kb * s.k_stride;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t e = 0;
    if (i < valid) {
      e = s.ue8m0 ? layout::fold_step_code(codes[row * s.mn_stride]) : fold_step(values[row * s.mn_stride]);
      if (++in_row == s.gran_mn) in_row = 0, ++row;
    }
    for (int j = 0; j < spread; ++j) step[i * spread + j] = e;
  }
}

// The K block of the load's column k and where the next one starts (relative to column 0).
struct Block {
  int64_t index, end;
};
inline Block block_at(const FoldScales& f, int64_t k, int64_t k_pad) {
  const int64_t index = (f.k0 + k) / f.s->gran_k;
  return {index, std::min(k_pad, (index + 1) * f.s->gran_k - f.k0)};
}

}  // namespace

void widen_folded_l0a(const uint8_t* l1, const layout::NzGeometry& g, int64_t k_off, int64_t k_pad, OperandFormat fmt,
                      uint16_t* l0a, const FoldScales& f) {
  const int group = host::l0a_k_group();
  thread_local std::vector<uint16_t> step;
  step.resize(size_t(g.rows_pad));
  for (int64_t k = 0; k < k_pad;) {
    const Block b = block_at(f, k, k_pad);
    fold_steps(f, b.index, 0, g.rows_pad, step.data(), 1);
    for (; k < b.end; k += kCubeBlock) {
      const host::L0AFractal fr = host::l0a_fractal(k / kCubeBlock, g.rows_pad, k_pad, group);
      widen_fold(fmt, l1 + g.offset(0, k_off + k) * g.bits / 8, layout::kC0Bytes, g.rows_pad, l0a + fr.offset,
                 fr.row_stride, step.data(), true);
    }
  }
}

void widen_folded_l0b(const uint8_t* l1, const layout::NzGeometry& g, int64_t k_off, const L0BGeometry& l0b_g,
                      OperandFormat fmt, uint16_t* l0b, const FoldScales& f) {
  const L0BGeometry panels = pair_panels(g);
  uint16_t step[kPairRow];
  for (int64_t n0 = 0; n0 < l0b_g.n_pad; n0 += kCubeBlock)
    for (int64_t k = 0; k < l0b_g.k_pad;) {
      // One K block at a time: a contiguous run of its K pairs, 16 columns x 2 values each.
      const Block b = block_at(f, k, l0b_g.k_pad);
      fold_steps(f, b.index, n0, kCubeBlock, step, kKPair);  // column n0 + j's step, for both values of each pair
      widen_fold(fmt, l1 + panels.offset(k_off + k, n0) * g.bits / 8, kWidenRun * g.bits / 8,
                 (b.end - k) * kCubeBlock / kWidenRun, l0b + l0b_g.offset(k, n0), kWidenRun, step, false);
      k = b.end;
    }
}

}  // namespace deepgemm_ascend::tile::host
