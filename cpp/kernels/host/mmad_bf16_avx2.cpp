// AVX2/FMA cube micro-kernel (only this file is compiled with -mavx2 -mfma).
//
// bf16 values widen to fp32 exactly by a 16-bit shift, so one 32-byte load of L0B (8 columns x one K
// pair) yields B(k, n..n+7) (shift) and B(k+1, n..n+7) (mask). Register tile: kRows rows x 16
// columns = 2 * kRows ymm accumulators, plus 4 B vectors and 2 A broadcasts.
#include <immintrin.h>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int64_t B = kCubeBlock;
constexpr int64_t kPairs = B / kKPair;
constexpr int kRows = 4;
constexpr int kHalves = 2;  // two 8-lane halves of a 16-column block

inline __m256 low_bf16(__m256i pairs) { return _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16)); }
inline __m256 high_bf16(__m256i pairs, __m256i mask) { return _mm256_castsi256_ps(_mm256_and_si256(pairs, mask)); }

void register_tile(const MmadArgs& o, int64_t mb, int64_t r0, int64_t nb) {
  const __m256i mask = _mm256_set1_epi32(int32_t(0xFFFF0000u));
  const bool scaled = o.row_scale != nullptr;
  float* cf = o.c + (nb * o.m_pad + mb * B + r0) * B;
  __m256 acc[kRows][kHalves];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r)
    for (int h = 0; h < kHalves; ++h)
      acc[r][h] = o.init || scaled ? _mm256_setzero_ps() : _mm256_loadu_ps(cf + r * B + h * 8);
  const int32_t* ap = reinterpret_cast<const int32_t*>(o.a) + (mb * B + r0) * kPairs;
  const uint16_t* bp = o.b + nb * o.k_pad * B;
  for (int64_t kb = 0; kb < o.k_pad / B; ++kb, ap += o.m_pad * kPairs, bp += B * B) {
#pragma GCC unroll 8
    for (int p = 0; p < kPairs; ++p) {
      const auto* brow = reinterpret_cast<const __m256i*>(bp + p * B * kKPair);
      const __m256i b0 = _mm256_loadu_si256(brow), b1 = _mm256_loadu_si256(brow + 1);
      const __m256 be[kHalves] = {low_bf16(b0), low_bf16(b1)};
      const __m256 bo[kHalves] = {high_bf16(b0, mask), high_bf16(b1, mask)};
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const __m256i pair = _mm256_set1_epi32(ap[r * kPairs + p]);
        const __m256 ae = low_bf16(pair), ao = high_bf16(pair, mask);
        for (int h = 0; h < kHalves; ++h) acc[r][h] = _mm256_fmadd_ps(ao, bo[h], _mm256_fmadd_ps(ae, be[h], acc[r][h]));
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r)
    for (int h = 0; h < kHalves; ++h) {
      float* out = cf + r * B + h * 8;
      if (!scaled) {
        _mm256_storeu_ps(out, acc[r][h]);
        continue;
      }
      const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(o.col_scale + nb * B + h * 8),
                                     _mm256_set1_ps(o.row_scale[mb * B + r0 + r]));
      _mm256_storeu_ps(out, o.init ? _mm256_mul_ps(acc[r][h], s) : _mm256_fmadd_ps(acc[r][h], s, _mm256_loadu_ps(out)));
    }
}

}  // namespace

void mmad_bf16_avx2(const MmadArgs& o) {
  for (int64_t nb = 0; nb < o.n_pad / B; ++nb)
    for (int64_t mb = 0; mb < o.m_pad / B; ++mb)
      for (int64_t r0 = 0; r0 < B; r0 += kRows) register_tile(o, mb, r0, nb);
}

// Calibration: 10 independent 8-lane FMA chains on registers.
double peak_loop_avx2(int64_t iters) {
  constexpr int kChains = 10;
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(float(i));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 10
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]));
  }
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  volatile float sink = out[0];
  (void)sink;
  return double(iters) * kChains * 8 * 2;
}

}  // namespace deepgemm_ascend::tile::host
