// The body of the cube's dot-product kernel (cube_dot.hpp), included once per instruction set: plain C++ the
// compiler vectorises across a kDotRows x kDotCols block of outputs, which stay in registers over all of K.
// The sums along K stay sequential (each output is one scalar chain), so every instruction set gives the
// same bits.
#pragma once

#include "cube_dot.hpp"

namespace deepgemm_ascend::npu_model::dot_body {

inline void block(const double* a, const double* b, int64_t k, double* out, int64_t out_stride) {
  double acc[kDotRows][kDotCols];
  for (int64_t i = 0; i < kDotRows; ++i)
    for (int64_t j = 0; j < kDotCols; ++j) acc[i][j] = out[i * out_stride + j];
  for (int64_t x = 0; x < k; ++x) {
    const double* ax = a + x * kDotRows;
    const double* bx = b + x * kDotCols;
#pragma GCC unroll 4
    for (int64_t i = 0; i < kDotRows; ++i)
#pragma GCC unroll 8
      for (int64_t j = 0; j < kDotCols; ++j) acc[i][j] += ax[i] * bx[j];
  }
  for (int64_t i = 0; i < kDotRows; ++i)
    for (int64_t j = 0; j < kDotCols; ++j) out[i * out_stride + j] = acc[i][j];
}

// B panel outer, A panel inner: one B panel (k x kDotCols) stays in the L1 cache while every A panel passes.
inline void run(const DotPanels& p) {
  const int64_t stride = p.n_panels * kDotCols;
  for (int64_t jb = 0; jb < p.n_panels; ++jb)
    for (int64_t ib = 0; ib < p.m_panels; ++ib)
      block(p.a + ib * p.k * kDotRows, p.b + jb * p.k * kDotCols, p.k, p.out + ib * kDotRows * stride + jb * kDotCols,
            stride);
}

}  // namespace deepgemm_ascend::npu_model::dot_body
