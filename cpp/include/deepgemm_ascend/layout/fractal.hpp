// Fractal layouts of the cube unit. A fractal is kFractalRows rows x C0 bytes (16 x 32 B = 512 B).
//
//   Nz of an [R, C] matrix: fractals ordered column-major (all row-blocks of column-block 0 first),
//       elements inside a fractal row-major.  offset(r, c) = (c / C0) * Rp * C0 + r * C0 + c % C0,
//       Rp = R padded to 16, C0 = 256 / bits values.
//   Zn of an [R, C] matrix: fractals ordered row-major, elements inside a fractal column-major, so
//       each fractal column holds C0 consecutive rows. Zn of X is exactly Nz of X^T.
// Padding (tails) holds zeros.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/macros.hpp"

namespace deepgemm_ascend::layout {

inline constexpr int64_t kFractalRows = arch::CubeFormat::kFractalRows;
inline constexpr int64_t kC0Bytes = arch::CubeFormat::kC0Bytes;
inline constexpr int64_t kC0Bits = kC0Bytes * 8;

DGA_HOST_DEVICE constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
DGA_HOST_DEVICE constexpr int64_t align_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
// std::min / std::max are not device code: the kernel templates use these.
DGA_HOST_DEVICE constexpr int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
DGA_HOST_DEVICE constexpr int64_t imax(int64_t a, int64_t b) { return a < b ? b : a; }

// Values per C0 row for an element width of `bits` (16 -> 16, 8 -> 32, 4 -> 64).
DGA_HOST_DEVICE constexpr int64_t c0_values(int bits) { return kC0Bits / bits; }

// An Nz tile of padded size rows_pad x cols_pad (rows_pad % 16 == 0, cols_pad % C0 == 0).
struct NzGeometry {
  int64_t rows_pad = 0;
  int64_t cols_pad = 0;
  int bits = 16;

  DGA_HOST_DEVICE static constexpr NzGeometry fit(int64_t rows, int64_t cols, int bits) {
    return {align_up(rows, kFractalRows), align_up(cols, c0_values(bits)), bits};
  }
  DGA_HOST_DEVICE constexpr int64_t c0() const { return c0_values(bits); }
  DGA_HOST_DEVICE constexpr int64_t offset(int64_t r, int64_t c) const {
    return (c / c0()) * rows_pad * c0() + r * c0() + c % c0();
  }
  DGA_HOST_DEVICE constexpr int64_t values() const { return rows_pad * cols_pad; }
  DGA_HOST_DEVICE constexpr int64_t bytes() const { return values() * bits / 8; }
};

}  // namespace deepgemm_ascend::layout
