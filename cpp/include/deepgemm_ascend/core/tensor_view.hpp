// A non-owning view of a strided tensor: what every API entry point receives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "deepgemm_ascend/core/device.hpp"
#include "deepgemm_ascend/core/dtype.hpp"

namespace deepgemm_ascend::core {

inline constexpr int kMaxDims = 6;

struct TensorView {
  void* data = nullptr;  // storage base
  int64_t offset = 0;    // storage offset, in elements
  DType dtype = DType::kFP32;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};  // in elements
  Device device{};

  int64_t size(int d) const { return shape[d < 0 ? d + ndim : d]; }
  int64_t stride(int d) const { return strides[d < 0 ? d + ndim : d]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  // Address of element (0, ..., 0).
  void* ptr() const { return static_cast<char*>(data) + offset * itemsize(dtype); }
  template <class T>
  T* as() const { return static_cast<T*>(ptr()); }

  bool is_contiguous() const {
    int64_t expect = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != expect) return false;
      expect *= shape[i];
    }
    return true;
  }

  // Byte range [first, last) touched by the view (empty views touch nothing).
  std::pair<uintptr_t, uintptr_t> byte_extent() const {
    if (numel() == 0) return {0, 0};
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < ndim; ++i) {
      int64_t span = (shape[i] - 1) * strides[i];
      (span < 0 ? lo : hi) += span;
    }
    auto base = reinterpret_cast<uintptr_t>(ptr());
    return {base + lo * itemsize(dtype), base + (hi + 1) * itemsize(dtype)};
  }
  bool overlaps(const TensorView& o) const {
    auto [a0, a1] = byte_extent();
    auto [b0, b1] = o.byte_extent();
    return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
  }
  bool same_view(const TensorView& o) const {
    if (ptr() != o.ptr() || dtype != o.dtype || ndim != o.ndim) return false;
    return std::equal(shape, shape + ndim, o.shape) && std::equal(strides, strides + ndim, o.strides);
  }

  std::string shape_str() const {
    std::string s = "[";
    for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }
  std::string strides_str() const {
    std::string s = "(";
    for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(strides[i]);
    return s + ")";
  }
};

// A transposed view of the last two dimensions.
inline TensorView transposed(TensorView t) {
  std::swap(t.shape[t.ndim - 1], t.shape[t.ndim - 2]);
  std::swap(t.strides[t.ndim - 1], t.strides[t.ndim - 2]);
  return t;
}

}  // namespace deepgemm_ascend::core
