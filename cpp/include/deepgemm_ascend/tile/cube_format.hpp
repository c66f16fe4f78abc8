// Operand formats of the host cube (the micro-kernels) for 16-bit inputs with fp32 accumulation.
//
//   L0A: Nz of the [M, K] tile, exactly as on the NPU (16 rows x 16 values per fractal).
//   L0B: per 16-column block of N, the whole K range with K pairs interleaved:
//        offset(k, n) = (n / 16) * Kp * 16 + (k / 2) * 32 + (n % 16) * 2 + k % 2.
//        This is the order VDPBF16PS and AMX TDPBF16PS read B in; on the NPU L0B is Zn instead.
//   L0C: Nz of the fp32 [M, N] tile with 16 x 16 fractals (1 KB), as on the NPU.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/layout/fractal.hpp"

namespace deepgemm_ascend::tile {

inline constexpr int64_t kCubeBlock = layout::kFractalRows;  // rows / columns of one cube fractal (16-bit and fp32 C)
inline constexpr int64_t kKPair = 2;       // K values combined per dot-product lane

struct L0BGeometry {
  int64_t k_pad = 0;  // multiple of 16
  int64_t n_pad = 0;  // multiple of 16
  constexpr int64_t offset(int64_t k, int64_t n) const {
    return (n / kCubeBlock) * k_pad * kCubeBlock + (k / kKPair) * kCubeBlock * kKPair + (n % kCubeBlock) * kKPair +
           k % kKPair;
  }
  constexpr int64_t bytes(int value_bytes) const { return k_pad * n_pad * value_bytes; }
};

struct L0CGeometry {
  int64_t m_pad = 0;  // multiple of 16
  int64_t n_pad = 0;  // multiple of 16
  constexpr int64_t offset(int64_t m, int64_t n) const {
    return (n / kCubeBlock) * m_pad * kCubeBlock + m * kCubeBlock + n % kCubeBlock;
  }
  constexpr int64_t bytes() const { return m_pad * n_pad * int64_t(sizeof(float)); }
};

}  // namespace deepgemm_ascend::tile
