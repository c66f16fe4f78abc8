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

void register_tile(float* c, const int32_t* a, const uint16_t* b, int64_t m_pad, int64_t k_pad, int64_t mb,
                   int64_t r0, int64_t nb, bool init) {
  const __m256i mask = _mm256_set1_epi32(int32_t(0xFFFF0000u));
  float* cf = c + (nb * m_pad + mb * B + r0) * B;
  __m256 acc[kRows][kHalves];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r)
    for (int h = 0; h < kHalves; ++h)
      acc[r][h] = init ? _mm256_setzero_ps() : _mm256_loadu_ps(cf + r * B + h * 8);
  const int32_t* ap = a + (mb * B + r0) * kPairs;
  const uint16_t* bp = b + nb * k_pad * B;
  for (int64_t kb = 0; kb < k_pad / B; ++kb, ap += m_pad * kPairs, bp += B * B) {
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
    for (int h = 0; h < kHalves; ++h) _mm256_storeu_ps(cf + r * B + h * 8, acc[r][h]);
}

}  // namespace

void mmad_bf16_avx2(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad, int64_t k_pad,
                    bool init) {
  const auto* pairs = reinterpret_cast<const int32_t*>(a);
  for (int64_t nb = 0; nb < n_pad / B; ++nb)
    for (int64_t mb = 0; mb < m_pad / B; ++mb)
      for (int64_t r0 = 0; r0 < B; r0 += kRows) register_tile(c, pairs, b, m_pad, k_pad, mb, r0, nb, init);
}

}  // namespace deepgemm_ascend::tile::host
