// AMX-BF16 cube micro-kernel body, written against a tile-ops policy so that the same code runs on
// AMX hardware (amx_ops.hpp) and, in the tests, on an exact software model of the AMX tiles.
//
// One tile product covers 32 K values (TDPBF16PS takes as long for 16), i.e. two fractals of K:
//   A tile  = 16 rows x 32 bf16 (64-byte rows): the L0A fractals kb, kb + 1 of a row block side by
//             side, as load_l1_to_l0a writes L0A for this kernel (K32: micro_kernels.hpp, l0a_fractal);
//   B tile  = two consecutive L0B fractals: 16 K pairs x 16 columns x 2 (64-byte rows, contiguous);
//   C tile  = one L0C fractal: 16 x 16 fp32 (64-byte rows, contiguous).
// Tiles 0-3 hold a 2 x 2 block of C fractals, 4-5 two A tiles, 6-7 two B tiles. An odd last K fractal
// is paired with zeros (its A rows and its B fractal are staged with a zero half).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host::amx {

inline constexpr int64_t kBlock = kCubeBlock;
inline constexpr int64_t kTileK = 2 * kBlock;                 // K values per tile product
inline constexpr int kARowBytes = int(kTileK * 2);            // 32 bf16
inline constexpr int kBRowBytes = int(kBlock * kKPair * 2);   // 16 columns x one K pair
inline constexpr int kCRowBytes = int(kBlock * 4);            // 16 fp32
inline constexpr int kBRows = int(kTileK / kKPair);
inline constexpr int kCTile0 = 0, kATile0 = 4, kBTile0 = 6;
inline constexpr int kTileBytes = int(kBlock) * kARowBytes;   // one A or B tile (1 KB)
inline constexpr int64_t kPrefetchSteps = 2;                   // K steps the operand prefetch runs ahead
// Fractal row blocks per pass over B (64 rows: 16 KB of A at l0_k = 128, beside one B column pair's 8 KB in a
// 48 KB L1d). Xeon with AMX, against one pass over all rows: 1.04-1.08x on the large shapes, 4 row pairs 1.03x.
inline constexpr int64_t kPassRowBlocks = 4;

// Shapes of the 8 tiles (rows, bytes per row) for Ops::configure.
struct TileShape {
  int rows, bytes;
};
inline constexpr TileShape kTileShapes[8] = {
    {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes},
    {int(kBlock), kARowBytes}, {int(kBlock), kARowBytes}, {kBRows, kBRowBytes},       {kBRows, kBRowBytes}};

// Scaled products leave the tiles through this fractal and are promoted into c, one row of 16 values at
// a time by Ops::promote_row (the hardware kernel: one AVX-512 register; the model: promote_row below).
inline void promote_row(const float* __restrict p, const float* __restrict cols, float row, bool init,
                        float* __restrict cr) {
  if (init)
    for (int64_t n = 0; n < kBlock; ++n) cr[n] = p[n] * (row * cols[n]);
  else
    for (int64_t n = 0; n < kBlock; ++n) cr[n] += p[n] * (row * cols[n]);
}

template <class Ops>
void promote_fractal(const MmadArgs& x, const float* part, float* c, int64_t mb, int64_t nb) {
  const float* cols = x.col_scale + nb * kBlock;
  for (int64_t r = 0; r < kBlock; ++r)
    Ops::promote_row(part + r * kBlock, cols, x.row_scale[mb * kBlock + r], x.init, c + r * kBlock);
}

// Stages the odd last K fractal of A's row blocks mb .. mb + MB - 1 (16 wide in K32) as tiles of 32 K
// values with a zero second half.
template <int MB>
void stage_a_last(const MmadArgs& x, int64_t mb, uint16_t (&a_last)[2][kBlock * kTileK]) {
  const L0AFractal f = l0a_fractal(x.k_pad / kBlock - 1, x.m_pad, x.k_pad, kK32Group);
  for (int i = 0; i < MB; ++i)
    for (int64_t r = 0; r < kBlock; ++r) {
      std::memcpy(a_last[i] + r * kTileK, x.a + f.offset + ((mb + i) * kBlock + r) * f.row_stride, kBlock * 2);
      std::memset(a_last[i] + r * kTileK + kBlock, 0, kBlock * 2);
    }
}

// C fractals (mb .. mb+MB-1) x (nb .. nb+NB-1), MB, NB in {1, 2}; a: L0A in K32.
template <class Ops, int MB, int NB>
void block(const MmadArgs& x, const uint16_t* a, int64_t mb, int64_t nb) {
  const int64_t frac = kBlock * kBlock, m_pad = x.m_pad, k_pad = x.k_pad;
  const int64_t steps = (k_pad + kTileK - 1) / kTileK, kbs = k_pad / kBlock;
  const bool scaled = x.row_scale != nullptr;
  auto c_at = [&](int i, int j) { return x.c + ((nb + j) * m_pad + (mb + i) * kBlock) * kBlock; };
  auto a_at = [&](int64_t s, int i) { return a + (s * m_pad + (mb + i) * kBlock) * kTileK; };
  auto b_at = [&](int64_t s, int j) { return x.b + (nb + j) * x.b_panel_stride() + 2 * s * frac; };
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NB; ++j) {
      if (x.init || scaled) Ops::zero(kCTile0 + i * 2 + j);
      else Ops::load(kCTile0 + i * 2 + j, c_at(i, j), kCRowBytes);
    }
  uint16_t a_last[2][kBlock * kTileK], b_last[2][kBlock * kTileK];  // an odd last K fractal, zero-padded
  for (int64_t s = 0; s < steps; ++s) {
    // The tile registers are not renamed: a load waits for the products that read its tile, so the
    // operands of a later K step are fetched into the L1 cache now (the L0 tiles live in L2).
    if (s + kPrefetchSteps < steps) {
      if (2 * (s + kPrefetchSteps) + 1 != kbs)  // the odd last fractal is staged, not loaded in place
        for (int i = 0; i < MB; ++i) Ops::prefetch(a_at(s + kPrefetchSteps, i), kTileBytes);
      for (int j = 0; j < NB; ++j) Ops::prefetch(b_at(s + kPrefetchSteps, j), kTileBytes);
    }
    const uint16_t* as[2] = {a_at(s, 0), MB > 1 ? a_at(s, 1) : nullptr};
    const uint16_t* bs[2] = {b_at(s, 0), NB > 1 ? b_at(s, 1) : nullptr};
    if (2 * s + 1 == kbs) {
      stage_a_last<MB>(x, mb, a_last);
      for (int i = 0; i < MB; ++i) as[i] = a_last[i];
      for (int j = 0; j < NB; ++j) {
        std::memcpy(b_last[j], bs[j], frac * 2);
        std::memset(b_last[j] + frac, 0, frac * 2);
        bs[j] = b_last[j];
      }
    }
    // Each load right before its first product: the next step's load of a tile waits only for the
    // products that read it, while the others run (A0 B0 C00 B1 C01 A1 C10 C11).
    for (int i = 0; i < MB; ++i) {
      Ops::load(kATile0 + i, as[i], kARowBytes);
      for (int j = 0; j < NB; ++j) {
        if (i == 0) Ops::load(kBTile0 + j, bs[j], kBRowBytes);
        Ops::dpbf16(kCTile0 + i * 2 + j, kATile0 + i, kBTile0 + j);
      }
    }
  }
  float part[kBlock * kBlock];
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NB; ++j) {
      if (!scaled) {
        Ops::store(kCTile0 + i * 2 + j, c_at(i, j), kCRowBytes);
        continue;
      }
      Ops::store(kCTile0 + i * 2 + j, part, kCRowBytes);
      promote_fractal<Ops>(x, part, c_at(i, j), mb + i, nb + j);
    }
}

template <class Ops>
void mmad_bf16(const MmadArgs& x) {
  const uint16_t* a = x.a;
  Ops::configure(kTileShapes);
  const int64_t mbs = x.m_pad / kBlock, nbs = x.n_pad / kBlock;
  // Row blocks in passes of kPassRowBlocks: their A rows stay in the L1 cache while every B column pair
  // goes by, so B is read from L2 once per pass instead of A once per column pair.
  for (int64_t pass = 0; pass < mbs; pass += kPassRowBlocks)
    for (int64_t nb = 0; nb < nbs; nb += 2)
      for (int64_t mb = pass; mb < std::min(mbs, pass + kPassRowBlocks); mb += 2) {
        const bool two_m = mb + 1 < mbs, two_n = nb + 1 < nbs;
        if (two_m && two_n) block<Ops, 2, 2>(x, a, mb, nb);
        else if (two_m) block<Ops, 2, 1>(x, a, mb, nb);
        else if (two_n) block<Ops, 1, 2>(x, a, mb, nb);
        else block<Ops, 1, 1>(x, a, mb, nb);
      }
  Ops::release();
}

}  // namespace deepgemm_ascend::tile::host::amx
