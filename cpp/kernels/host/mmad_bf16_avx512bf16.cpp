// AVX512-BF16 cube micro-kernel (compiled with -mavx512f -mavx512bf16 only for this file).
// One 16 x 16 fp32 fractal of L0C lives in 16 zmm accumulators; per K pair, one 64-byte row of
// L0B (16 columns x 2 K values) is multiplied with a broadcast K pair of each A row.
#include <immintrin.h>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

void mmad_bf16_avx512bf16(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad,
                          int64_t k_pad, bool init) {
  constexpr int64_t B = kCubeBlock;
  constexpr int64_t kPairs = B / kKPair;
  const int64_t frac = B * B;
  for (int64_t nb = 0; nb < n_pad / B; ++nb) {
    const uint16_t* bcol = b + nb * k_pad * B;
    for (int64_t mb = 0; mb < m_pad / B; ++mb) {
      float* cf = c + (nb * m_pad + mb * B) * B;
      __m512 acc[B];
      for (int r = 0; r < B; ++r) acc[r] = init ? _mm512_setzero_ps() : _mm512_loadu_ps(cf + r * B);
      for (int64_t kb = 0; kb < k_pad / B; ++kb) {
        const auto* af = reinterpret_cast<const int32_t*>(a + kb * m_pad * B + mb * frac);
        const uint16_t* bf = bcol + kb * frac;
        for (int64_t p = 0; p < kPairs; ++p) {
          const __m512bh bv = (__m512bh)_mm512_loadu_si512(bf + p * B * kKPair);
          for (int r = 0; r < B; ++r)
            acc[r] = _mm512_dpbf16_ps(acc[r], (__m512bh)_mm512_set1_epi32(af[r * kPairs + p]), bv);
        }
      }
      for (int r = 0; r < B; ++r) _mm512_storeu_ps(cf + r * B, acc[r]);
    }
  }
}

}  // namespace deepgemm_ascend::tile::host
