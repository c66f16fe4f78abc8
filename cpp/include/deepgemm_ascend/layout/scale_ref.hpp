// Read access to a scale-factor tensor of logical shape [ceil(MN / gran_mn), ceil(K / gran_k)].
//
//   fp32:  one float per (row, K block), any strides (in floats).
//   ue8m0: exponent bytes, `pack` K-adjacent bytes per element (2 for the Ascend int16 layout,
//          4 for upstream's int32), strides in bytes between elements; scale = 2^(byte - 127).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "deepgemm_ascend/core/macros.hpp"

namespace deepgemm_ascend::layout {

struct ScaleRef {
  static constexpr uint8_t kNaNCode = 0xFF;
  static constexpr int kBias = 127;

  const void* base = nullptr;  // element (0, 0)
  bool ue8m0 = false;
  int pack = 1;                // K blocks per stored element (ue8m0 only)
  int64_t mn_stride = 0;       // fp32: floats; ue8m0: bytes
  int64_t k_stride = 0;        // between stored elements along K; same units
  int64_t gran_mn = 1;
  int64_t gran_k = 128;

  // The same scales seen from row `r` on (r a multiple of gran_mn) and K block `kb` on.
  DGA_HOST_DEVICE ScaleRef shifted(int64_t r, int64_t kb = 0) const {
    ScaleRef s = *this;
    const int64_t unit = ue8m0 ? 1 : int64_t(sizeof(float));
    s.base = static_cast<const uint8_t*>(base) + ((r / gran_mn) * mn_stride + (kb / pack) * k_stride) * unit;
    return s;
  }

  // The same layout `bytes` further on (the next group of a grouped GEMM).
  DGA_HOST_DEVICE ScaleRef advanced(int64_t bytes) const {
    ScaleRef s = *this;
    s.base = static_cast<const uint8_t*>(base) + bytes;
    return s;
  }

  // Scale of logical row `mn` (before dividing by gran_mn) and K block `kb`.
  float at(int64_t mn, int64_t kb) const {
    const int64_t r = mn / gran_mn;
    if (!ue8m0) return static_cast<const float*>(base)[r * mn_stride + kb * k_stride];
    const auto* bytes = static_cast<const uint8_t*>(base);
    return exp2_code(bytes[r * mn_stride + (kb / pack) * k_stride + kb % pack]);
  }

  // 2^(e - 127) built from its bits (e = 0 is the subnormal 2^-127), NaN for 0xFF.
  static float exp2_code(uint8_t e) {
    constexpr uint32_t kSubnormalOne = 1u << 22, kNaNBits = 0x7FC00000u;
    constexpr int kMantissaBits = 23;
    const uint32_t bits = e == kNaNCode ? kNaNBits : e == 0 ? kSubnormalOne : uint32_t(e) << kMantissaBits;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
};

}  // namespace deepgemm_ascend::layout
