// Helpers shared by the gtests: deterministic data, a double-precision GEMM reference and integer
// ceil-division written out here (independent of the library's layout::ceil_div, which tests check).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/tensor_view.hpp"

namespace dga_test {

namespace core = deepgemm_ascend::core;

// ceil(a / b) for a >= 0, b > 0.
inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline core::TensorView view2d(void* p, core::DType dt, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  core::TensorView v;
  v.data = p;
  v.dtype = dt;
  v.ndim = 2;
  v.shape[0] = rows;
  v.shape[1] = cols;
  v.strides[0] = rs;
  v.strides[1] = cs;
  return v;
}

// A contiguous tensor of `shape` (row-major strides) on the host.
inline core::TensorView contiguous(void* p, core::DType dt, const std::vector<int64_t>& shape) {
  core::TensorView v;
  v.data = p;
  v.dtype = dt;
  v.ndim = int(shape.size());
  int64_t stride = 1;
  for (int i = v.ndim - 1; i >= 0; --i) {
    v.shape[i] = shape[size_t(i)];
    v.strides[i] = stride;
    stride *= shape[size_t(i)];
  }
  return v;
}

inline std::vector<uint16_t> random_bf16(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> dist;
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = core::float_to_bf16(dist(g));
  return v;
}

// calc_diff of DeepGEMM: 1 - 2 sum(xy) / sum(x^2 + y^2).
inline double calc_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double xy = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    den += x[i] * x[i] + y[i] * y[i];
  }
  return den == 0 ? 0 : 1 - 2 * xy / den;
}

}  // namespace dga_test
