// Portable cube micro-kernel: any CPU, no ISA flags. Same formats as every other host micro-kernel.
#include <cstring>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

void mmad_bf16_scalar(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad, int64_t k_pad,
                      bool init) {
  constexpr int64_t B = kCubeBlock;
  const int64_t frac = B * B;
  for (int64_t nb = 0; nb < n_pad / B; ++nb) {
    const uint16_t* bcol = b + nb * k_pad * B;
    for (int64_t mb = 0; mb < m_pad / B; ++mb) {
      float acc[B][B];
      float* cf = c + (nb * m_pad + mb * B) * B;
      if (init) std::memset(acc, 0, sizeof acc);
      else std::memcpy(acc, cf, sizeof acc);
      for (int64_t kb = 0; kb < k_pad / B; ++kb) {
        const uint16_t* af = a + kb * m_pad * B + mb * frac;
        const uint16_t* bf = bcol + kb * frac;
        for (int64_t p = 0; p < B / kKPair; ++p) {
          float bv[kKPair][B];
          for (int64_t n = 0; n < B; ++n)
            for (int64_t j = 0; j < kKPair; ++j) bv[j][n] = core::bf16_to_float(bf[(p * B + n) * kKPair + j]);
          for (int64_t r = 0; r < B; ++r) {
            const float a0 = core::bf16_to_float(af[r * B + p * kKPair]);
            const float a1 = core::bf16_to_float(af[r * B + p * kKPair + 1]);
            for (int64_t n = 0; n < B; ++n) acc[r][n] += a0 * bv[0][n] + a1 * bv[1][n];
          }
        }
      }
      std::memcpy(cf, acc, sizeof acc);
    }
  }
}

}  // namespace deepgemm_ascend::tile::host
