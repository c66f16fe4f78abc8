// AVX512-BF16 cube micro-kernel (only this file is compiled with AVX-512 flags).
//
// Register tile: kRows rows of one A fractal x kNBlocks 16-column blocks of N, i.e. kRows x kNBlocks
// zmm accumulators (one fp32 fractal row each). Per K pair: kNBlocks 64-byte rows of L0B, and one
// broadcast A pair per row (an embedded-broadcast operand), so 8 + 2 loads feed 16 VDPBF16PS.
#include <immintrin.h>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "peak_chains.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int64_t B = kCubeBlock;
constexpr int64_t kPairs = B / kKPair;  // K pairs per fractal
constexpr int kRows = 8;
constexpr int kNBlocks = 2;

// Scaled tiles start from zero and are promoted into c at the end (acc x row x col (+ c)).
template <int kR, int kN>
inline void register_tile(const MmadArgs& o, int64_t mb, int64_t r0, int64_t nb) {
  const bool scaled = o.row_scale != nullptr;
  __m512 acc[kR][kN];
#pragma GCC unroll 4
  for (int j = 0; j < kN; ++j) {
    float* cf = o.c + ((nb + j) * o.m_pad + mb * B + r0) * B;
#pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) acc[r][j] = o.init || scaled ? _mm512_setzero_ps() : _mm512_loadu_ps(cf + r * B);
  }
  const int32_t* a = reinterpret_cast<const int32_t*>(o.a) + (mb * B + r0) * kPairs;
  const int64_t a_step = o.m_pad * kPairs;  // between K fractals of A, in pairs
  const int64_t b_step = o.b_panel_stride();  // between column blocks of B
  const uint16_t* b = o.b + nb * b_step;
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
    if (!scaled) {
#pragma GCC unroll 16
      for (int r = 0; r < kR; ++r) _mm512_storeu_ps(cf + r * B, acc[r][j]);
      continue;
    }
    const __m512 col = _mm512_loadu_ps(o.col_scale + (nb + j) * B);
#pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      const __m512 s = _mm512_mul_ps(col, _mm512_set1_ps(o.row_scale[mb * B + r0 + r]));
      const __m512 v = o.init ? _mm512_mul_ps(acc[r][j], s) : _mm512_fmadd_ps(acc[r][j], s, _mm512_loadu_ps(cf + r * B));
      _mm512_storeu_ps(cf + r * B, v);
    }
  }
}

// Calibration: 12 independent VDPBF16PS chains (enough to cover its latency on both ports).
struct Avx512Bf16Peak {
  using Vec = __m512;
  static constexpr int kChains = 12;
  static constexpr double kFlopsPerStep = 16 * kKPair * 2;  // 16 lanes x one K pair x multiply-add
  static Vec init(int i) { return _mm512_set1_ps(float(i)); }
  static Vec step(Vec v) {
    return _mm512_dpbf16_ps(v, (__m512bh)_mm512_set1_epi32(0x3F803F80), (__m512bh)_mm512_set1_epi32(0x3F7F3F7F));
  }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
};

}  // namespace

void mmad_bf16_avx512bf16(const MmadArgs& o) {
  const int64_t n_blocks = o.n_pad / B;
  int64_t nb = 0;
  // Column blocks in pairs; each pair sweeps every row block so its B columns stay in L1d.
  for (; nb + kNBlocks <= n_blocks; nb += kNBlocks)
    for (int64_t mb = 0; mb < o.m_pad / B; ++mb)
      for (int64_t r0 = 0; r0 < B; r0 += kRows) register_tile<kRows, kNBlocks>(o, mb, r0, nb);
  for (; nb < n_blocks; ++nb)
    for (int64_t mb = 0; mb < o.m_pad / B; ++mb) register_tile<B, 1>(o, mb, 0, nb);
}

double peak_loop_avx512bf16(int64_t iters) { return peak_chains<Avx512Bf16Peak>(iters); }

}  // namespace deepgemm_ascend::tile::host
