// K-pair interleave (L0B's order) of 16 x 16 bf16 values with AVX-512F: a 16 x 8 transpose of 32-bit pair words,
// three rounds of eight two-source permutes (vpermt2d) on the fractal's eight registers.
//   round 1: V[r][q]  = words p in [4r, 4r + 4) of rows n in [4q, 4q + 4)   (from input registers 2q, 2q + 1)
//   round 2: W[s][h]  = words p in [2s, 2s + 2) of rows n in [8h, 8h + 8)   (from V[s / 2][2h], V[s / 2][2h + 1])
//   round 3: out[p]   = word p of rows 0 .. 15                              (from W[p / 2][0], W[p / 2][1])
// The index vectors are derived once from these definitions (Perm below), so each round is its content.
#include <immintrin.h>

#include <array>
#include <cstdint>

#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kLanes = 16, kRows = 16, kPairs = 8;

// A register's content: the (row n, pair p) of each lane.
struct Content {
  std::array<int, kLanes> n, p;
};

// vpermt2d index picking, for each lane of `want`, its element from `a` (0-15) or `b` (16-31).
__m512i index_of(const Content& want, const Content& a, const Content& b) {
  alignas(64) int32_t idx[kLanes];
  for (int l = 0; l < kLanes; ++l)
    for (int s = 0; s < 2 * kLanes; ++s) {
      const Content& src = s < kLanes ? a : b;
      if (src.n[s % kLanes] == want.n[l] && src.p[s % kLanes] == want.p[l]) idx[l] = s;
    }
  return _mm512_load_si512(idx);
}

// Rows [n0, n0 + rows) x pairs [p0, p0 + kLanes / rows), row-major within the register (rows outer when
// pairs_inner, as the input registers are), else pairs outer.
Content block(int n0, int rows, int p0, bool pairs_inner) {
  Content c{};
  const int pairs = kLanes / rows;
  for (int l = 0; l < kLanes; ++l) {
    c.n[l] = n0 + (pairs_inner ? l / pairs : l % rows);
    c.p[l] = p0 + (pairs_inner ? l % pairs : l / rows);
  }
  return c;
}

struct Perm {
  __m512i r1[2], r2[4], r3[kPairs];
  Perm() {
    auto input = [](int z) {  // input register z: rows 2z, 2z + 1, all 8 pairs each
      Content c{};
      for (int l = 0; l < kLanes; ++l) c.n[l] = 2 * z + l / kPairs, c.p[l] = l % kPairs;
      return c;
    };
    // V[r][q]: rows 4q..4q+3 x pairs 4r..4r+3; W[s][h]: rows 8h..8h+7 x pairs 2s, 2s+1; out[p]: rows 0..15.
    auto v = [](int r, int q) { return block(4 * q, 4, 4 * r, true); };
    auto w = [](int s, int h) { return block(8 * h, 8, 2 * s, false); };
    for (int r = 0; r < 2; ++r) r1[r] = index_of(v(r, 0), input(0), input(1));
    for (int s = 0; s < 4; ++s) r2[s] = index_of(w(s, 0), v(s / 2, 0), v(s / 2, 1));
    for (int p = 0; p < kPairs; ++p) r3[p] = index_of(block(0, kRows, p, false), w(p / 2, 0), w(p / 2, 1));
  }
};

}  // namespace

void interleave_k_pairs_avx512(const uint16_t* f, int64_t stride, uint32_t* out) {
  static const Perm perm;
  __m512i z[8], v[2][4], w[4][2];
  // Input register i: rows 2i and 2i + 1 (8 pair words each), one load where they are contiguous (an L1 Nz
  // fractal), two 256-bit halves otherwise (rows of a GM matrix).
  if (stride == kLanes) {
    for (int i = 0; i < 8; ++i) z[i] = _mm512_loadu_si512(f + i * 2 * kLanes);
  } else {
    constexpr __mmask8 kLow = 0x0F, kHigh = 0xF0;  // the 64-bit lanes of each 256-bit half
    for (int i = 0; i < 8; ++i) {
      const __m512i lo = _mm512_maskz_loadu_epi64(kLow, f + 2 * i * stride);
      const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f + (2 * i + 1) * stride));
      z[i] = _mm512_mask_broadcast_i64x4(lo, kHigh, hi);
    }
  }
  // The index of V[r][q] does not depend on q (same relative layout of its two inputs), likewise below.
  for (int r = 0; r < 2; ++r)
    for (int q = 0; q < 4; ++q) v[r][q] = _mm512_permutex2var_epi32(z[2 * q], perm.r1[r], z[2 * q + 1]);
  for (int s = 0; s < 4; ++s)
    for (int h = 0; h < 2; ++h) w[s][h] = _mm512_permutex2var_epi32(v[s / 2][2 * h], perm.r2[s], v[s / 2][2 * h + 1]);
  for (int p = 0; p < kPairs; ++p)
    _mm512_storeu_si512(out + p * kLanes, _mm512_permutex2var_epi32(w[p / 2][0], perm.r3[p], w[p / 2][1]));
}

}  // namespace deepgemm_ascend::tile::host
