// Portable cube micro-kernel: any CPU, no ISA flags. Same formats as every other host micro-kernel.
#include <cstring>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

void mmad_bf16_scalar(const MmadArgs& x) {
  constexpr int64_t B = kCubeBlock;
  const int64_t frac = B * B;
  const bool scaled = x.row_scale != nullptr;
  for (int64_t nb = 0; nb < x.n_pad / B; ++nb) {
    const uint16_t* bcol = x.b + nb * x.b_panel_stride();
    for (int64_t mb = 0; mb < x.m_pad / B; ++mb) {
      float acc[B][B];
      float* cf = x.c + (nb * x.m_pad + mb * B) * B;
      if (x.init || scaled) std::memset(acc, 0, sizeof acc);
      else std::memcpy(acc, cf, sizeof acc);
      for (int64_t kb = 0; kb < x.k_pad / B; ++kb) {
        const uint16_t* af = x.a + kb * x.m_pad * B + mb * frac;
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
      if (!scaled) {
        std::memcpy(cf, acc, sizeof acc);
        continue;
      }
      for (int64_t r = 0; r < B; ++r)
        for (int64_t n = 0; n < B; ++n) {
          const float v = acc[r][n] * (x.row_scale[mb * B + r] * x.col_scale[nb * B + n]);
          cf[r * B + n] = x.init ? v : cf[r * B + n] + v;
        }
    }
  }
}

// Calibration: 8 independent multiply-add chains, compiled like the scalar micro-kernel.
double peak_loop_scalar(int64_t iters) {
  constexpr int kChains = 8;
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = float(i);
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * 0.999f + 1e-3f;
  volatile float sink = acc[0];
  for (int i = 1; i < kChains; ++i) sink = sink + acc[i];
  return double(iters) * kChains * 2;
}

}  // namespace deepgemm_ascend::tile::host
