// AMX-BF16 cube micro-kernel body, written against a tile-ops policy so that the same code runs on
// AMX hardware (amx_ops.hpp) and, in the tests, on an exact software model of the AMX tiles.
//
// Every AMX tile is exactly one fractal of the host formats:
//   A tile  = one L0A Nz fractal: 16 rows x 16 bf16 (32-byte rows, contiguous);
//   B tile  = one L0B fractal: 8 K pairs x 16 columns x 2 (64-byte rows, contiguous);
//   C tile  = one L0C fractal: 16 x 16 fp32 (64-byte rows, contiguous).
// Tiles 0-3 hold a 2 x 2 block of C fractals, 4-5 two A fractals, 6-7 two B fractals.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host::amx {

inline constexpr int64_t kBlock = kCubeBlock;
inline constexpr int kARowBytes = int(kBlock * 2);            // 16 bf16
inline constexpr int kBRowBytes = int(kBlock * kKPair * 2);   // 16 columns x one K pair
inline constexpr int kCRowBytes = int(kBlock * 4);            // 16 fp32
inline constexpr int kBRows = int(kBlock / kKPair);
inline constexpr int kCTile0 = 0, kATile0 = 4, kBTile0 = 6;

// Shapes of the 8 tiles (rows, bytes per row) for Ops::configure.
struct TileShape {
  int rows, bytes;
};
inline constexpr TileShape kTileShapes[8] = {
    {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes}, {int(kBlock), kCRowBytes},
    {int(kBlock), kARowBytes}, {int(kBlock), kARowBytes}, {kBRows, kBRowBytes},       {kBRows, kBRowBytes}};

// Scaled products leave the tiles through this fractal and are promoted into c.
inline void promote_fractal(const MmadArgs& x, const float* part, float* c, int64_t mb, int64_t nb) {
  for (int64_t r = 0; r < kBlock; ++r)
    for (int64_t n = 0; n < kBlock; ++n) {
      const float v = part[r * kBlock + n] * (x.row_scale[mb * kBlock + r] * x.col_scale[nb * kBlock + n]);
      c[r * kBlock + n] = x.init ? v : c[r * kBlock + n] + v;
    }
}

// C fractals (mb .. mb+MB-1) x (nb .. nb+NB-1), MB, NB in {1, 2}.
template <class Ops, int MB, int NB>
void block(const MmadArgs& x, int64_t mb, int64_t nb) {
  const int64_t frac = kBlock * kBlock, m_pad = x.m_pad, k_pad = x.k_pad;
  const bool scaled = x.row_scale != nullptr;
  const uint16_t *a = x.a, *b = x.b;
  auto c_at = [&](int i, int j) { return x.c + ((nb + j) * m_pad + (mb + i) * kBlock) * kBlock; };
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NB; ++j) {
      if (x.init || scaled) Ops::zero(kCTile0 + i * 2 + j);
      else Ops::load(kCTile0 + i * 2 + j, c_at(i, j), kCRowBytes);
    }
  for (int64_t kb = 0; kb < k_pad / kBlock; ++kb) {
    for (int i = 0; i < MB; ++i) Ops::load(kATile0 + i, a + kb * m_pad * kBlock + (mb + i) * frac, kARowBytes);
    for (int j = 0; j < NB; ++j) Ops::load(kBTile0 + j, b + (nb + j) * k_pad * kBlock + kb * frac, kBRowBytes);
    for (int i = 0; i < MB; ++i)
      for (int j = 0; j < NB; ++j) Ops::dpbf16(kCTile0 + i * 2 + j, kATile0 + i, kBTile0 + j);
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
  Ops::configure(kTileShapes);
  const int64_t mbs = x.m_pad / kBlock, nbs = x.n_pad / kBlock;
  for (int64_t nb = 0; nb < nbs; nb += 2)
    for (int64_t mb = 0; mb < mbs; mb += 2) {
      const bool two_m = mb + 1 < mbs, two_n = nb + 1 < nbs;
      if (two_m && two_n) block<Ops, 2, 2>(x, mb, nb);
      else if (two_m) block<Ops, 2, 1>(x, mb, nb);
      else if (two_n) block<Ops, 1, 2>(x, mb, nb);
      else block<Ops, 1, 1>(x, mb, nb);
    }
  Ops::release();
}

}  // namespace deepgemm_ascend::tile::host::amx
