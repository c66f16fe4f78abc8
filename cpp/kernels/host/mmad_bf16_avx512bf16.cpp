// AVX512-BF16 cube micro-kernel (only this file is compiled with AVX-512 flags).
//
// Register tile: kRows rows of one A fractal x kNBlocks 16-column blocks of N, i.e. kRows x kNBlocks
// zmm accumulators (one fp32 fractal row each). Per K pair: kNBlocks 64-byte rows of L0B, and one
// broadcast A pair per row (an embedded-broadcast operand), so 8 + 2 loads feed 16 VDPBF16PS.
#include <immintrin.h>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int64_t B = kCubeBlock;
constexpr int64_t kPairs = B / kKPair;  // K pairs per fractal
constexpr int kRows = 8;
constexpr int kNBlocks = 2;

struct Operands {
  float* c;
  const int32_t* a;   // A pairs of fractal row block mb, row r0
  const uint16_t* b;  // L0B column block nb
  int64_t m_pad, k_pad;
};

template <int kR, int kN>
inline void register_tile(const Operands& o, int64_t mb, int64_t r0, int64_t nb, bool init) {
  __m512 acc[kR][kN];
#pragma GCC unroll 4
  for (int j = 0; j < kN; ++j) {
    float* cf = o.c + ((nb + j) * o.m_pad + mb * B + r0) * B;
#pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) acc[r][j] = init ? _mm512_setzero_ps() : _mm512_loadu_ps(cf + r * B);
  }
  const int32_t* a = o.a + (mb * B + r0) * kPairs;
  const int64_t a_step = o.m_pad * kPairs;  // between K fractals of A, in pairs
  const uint16_t* b = o.b + nb * o.k_pad * B;
  const int64_t b_step = o.k_pad * B;       // between column blocks of B
  for (int64_t kb = 0; kb < o.k_pad / B; ++kb, a += a_step, b += B * B) {
#pragma GCC unroll 8
    for (int p = 0; p < kPairs; ++p) {
      __m512bh bv[kN];
#pragma GCC unroll 4
      for (int j = 0; j < kN; ++j) bv[j] = (__m512bh)_mm512_loadu_si512(b + j * b_step + p * B * kKPair);
#pragma GCC unroll 16
      for (int r = 0; r < kR; ++r) {
        const __m512bh av = (__m512bh)_mm512_set1_epi32(a[r * kPairs + p]);
#pragma GCC unroll 4
        for (int j = 0; j < kN; ++j) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], av, bv[j]);
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kN; ++j) {
    float* cf = o.c + ((nb + j) * o.m_pad + mb * B + r0) * B;
#pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) _mm512_storeu_ps(cf + r * B, acc[r][j]);
  }
}

}  // namespace

void mmad_bf16_avx512bf16(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad,
                          int64_t k_pad, bool init) {
  const Operands o{c, reinterpret_cast<const int32_t*>(a), b, m_pad, k_pad};
  const int64_t n_blocks = n_pad / B;
  int64_t nb = 0;
  // Column blocks in pairs; each pair sweeps every row block so its B columns stay in L1d.
  for (; nb + kNBlocks <= n_blocks; nb += kNBlocks)
    for (int64_t mb = 0; mb < m_pad / B; ++mb)
      for (int64_t r0 = 0; r0 < B; r0 += kRows) register_tile<kRows, kNBlocks>(o, mb, r0, nb, init);
  for (; nb < n_blocks; ++nb)
    for (int64_t mb = 0; mb < m_pad / B; ++mb) register_tile<B, 1>(o, mb, 0, nb, init);
}

}  // namespace deepgemm_ascend::tile::host
