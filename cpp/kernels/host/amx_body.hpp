// AMX-BF16 cube micro-kernel body, written against a tile-ops policy so that the same code runs on
// AMX hardware (amx_ops.hpp) and, in the tests, on an exact software model of the AMX tiles.
//
// One tile product covers 32 K values (TDPBF16PS takes as long for 16), i.e. two fractals of K:
//   A tile  = 16 rows x 32 bf16 (64-byte rows): the L0A Nz fractals kb, kb + 1 of a row block side by
//             side, from a per-call copy of L0A with 32 K values per row (K32 below);
//   B tile  = two consecutive L0B fractals: 16 K pairs x 16 columns x 2 (64-byte rows, contiguous);
//   C tile  = one L0C fractal: 16 x 16 fp32 (64-byte rows, contiguous).
// Tiles 0-3 hold a 2 x 2 block of C fractals, 4-5 two A tiles, 6-7 two B tiles. An odd last K fractal
// is paired with zeros (A's copy has them; B's last pair is staged with a zero half).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

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

// Shapes of the 8 tiles (rows, bytes per row) for Ops::configure.
struct TileShape {
  int rows, bytes;
};
inline constexpr TileShape kTileShapes[8] = {
    {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes},
    {int(kBlock), kARowBytes}, {int(kBlock), kARowBytes}, {kBRows, kBRowBytes},       {kBRows, kBRowBytes}};

// L0A (Nz: fractal column kb holds rows 0 .. m_pad - 1 x K [16 kb, 16 kb + 16)) as K32: row r of K step
// s at (s * m_pad + r) * 32, its K [32 s, 32 s + 32), zeros past k_pad. One buffer per thread.
inline const uint16_t* a_k32(const MmadArgs& x) {
  thread_local std::vector<uint16_t> buf;
  const int64_t steps = (x.k_pad + kTileK - 1) / kTileK, kbs = x.k_pad / kBlock;
  buf.resize(size_t(steps * x.m_pad * kTileK));
  for (int64_t s = 0; s < steps; ++s)
    for (int64_t half = 0; half < 2; ++half) {
      const int64_t kb = 2 * s + half;
      uint16_t* out = buf.data() + s * x.m_pad * kTileK + half * kBlock;
      const uint16_t* in = x.a + kb * x.m_pad * kBlock;
      for (int64_t r = 0; r < x.m_pad; ++r) {
        if (kb < kbs) std::memcpy(out + r * kTileK, in + r * kBlock, kBlock * 2);
        else std::memset(out + r * kTileK, 0, kBlock * 2);
      }
    }
  return buf.data();
}

// Scaled products leave the tiles through this fractal and are promoted into c: one row's 16 values
// in a plain loop (vectorised where the file is compiled with AVX-512F, as the hardware kernel is).
inline void promote_fractal(const MmadArgs& x, const float* part, float* c, int64_t mb, int64_t nb) {
  const float* cols = x.col_scale + nb * kBlock;
  for (int64_t r = 0; r < kBlock; ++r) {
    const float row = x.row_scale[mb * kBlock + r];
    const float* p = part + r * kBlock;
    float* cr = c + r * kBlock;
    if (x.init)
      for (int64_t n = 0; n < kBlock; ++n) cr[n] = p[n] * (row * cols[n]);
    else
      for (int64_t n = 0; n < kBlock; ++n) cr[n] += p[n] * (row * cols[n]);
  }
}

// C fractals (mb .. mb+MB-1) x (nb .. nb+NB-1), MB, NB in {1, 2}; a: L0A as K32.
template <class Ops, int MB, int NB>
void block(const MmadArgs& x, const uint16_t* a, int64_t mb, int64_t nb) {
  const int64_t frac = kBlock * kBlock, m_pad = x.m_pad, k_pad = x.k_pad;
  const int64_t steps = (k_pad + kTileK - 1) / kTileK, kbs = k_pad / kBlock;
  const bool scaled = x.row_scale != nullptr;
  auto c_at = [&](int i, int j) { return x.c + ((nb + j) * m_pad + (mb + i) * kBlock) * kBlock; };
  auto a_at = [&](int64_t s, int i) { return a + (s * m_pad + (mb + i) * kBlock) * kTileK; };
  auto b_at = [&](int64_t s, int j) { return x.b + (nb + j) * k_pad * kBlock + 2 * s * frac; };
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NB; ++j) {
      if (x.init || scaled) Ops::zero(kCTile0 + i * 2 + j);
      else Ops::load(kCTile0 + i * 2 + j, c_at(i, j), kCRowBytes);
    }
  uint16_t b_last[2][kBlock * kTileK];  // an odd last K fractal of B, with a zero second half
  for (int64_t s = 0; s < steps; ++s) {
    // The tile registers are not renamed: a load waits for the products that read its tile, so the
    // operands of a later K step are fetched into the L1 cache now (the L0 tiles live in L2).
    if (s + kPrefetchSteps < steps) {
      for (int i = 0; i < MB; ++i) Ops::prefetch(a_at(s + kPrefetchSteps, i), kTileBytes);
      for (int j = 0; j < NB; ++j) Ops::prefetch(b_at(s + kPrefetchSteps, j), kTileBytes);
    }
    const uint16_t* bs[2] = {b_at(s, 0), NB > 1 ? b_at(s, 1) : nullptr};
    if (2 * s + 1 == kbs)
      for (int j = 0; j < NB; ++j) {
        std::memcpy(b_last[j], bs[j], frac * 2);
        std::memset(b_last[j] + frac, 0, frac * 2);
        bs[j] = b_last[j];
      }
    // Each load right before its first product: the next step's load of a tile waits only for the
    // products that read it, while the others run (A0 B0 C00 B1 C01 A1 C10 C11).
    for (int i = 0; i < MB; ++i) {
      Ops::load(kATile0 + i, a_at(s, i), kARowBytes);
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
      promote_fractal(x, part, c_at(i, j), mb + i, nb + j);
    }
}

template <class Ops>
void mmad_bf16(const MmadArgs& x) {
  const uint16_t* a = a_k32(x);
  Ops::configure(kTileShapes);
  const int64_t mbs = x.m_pad / kBlock, nbs = x.n_pad / kBlock;
  for (int64_t nb = 0; nb < nbs; nb += 2)
    for (int64_t mb = 0; mb < mbs; mb += 2) {
      const bool two_m = mb + 1 < mbs, two_n = nb + 1 < nbs;
      if (two_m && two_n) block<Ops, 2, 2>(x, a, mb, nb);
      else if (two_m) block<Ops, 2, 1>(x, a, mb, nb);
      else if (two_n) block<Ops, 1, 2>(x, a, mb, nb);
      else block<Ops, 1, 1>(x, a, mb, nb);
    }
  Ops::release();
}

}  // namespace deepgemm_ascend::tile::host::amx
