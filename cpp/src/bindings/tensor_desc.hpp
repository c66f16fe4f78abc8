// Tensor descriptors of the nanobind layer: (storage pointer, storage offset, dtype name, shape,
// strides, device type, device index), built by deepgemm_ascend._tensor.desc.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/core/tensor_view.hpp"

namespace deepgemm_ascend::bindings {

namespace nb = nanobind;
using core::DType;
using core::ErrorKind;

using TensorDesc = std::tuple<uintptr_t, int64_t, std::string, std::vector<int64_t>, std::vector<int64_t>,
                              std::string, int>;

inline DType parse_dtype(const std::string& s, const std::string& arg) {
  for (int i = 0; i <= int(DType::kInt64); ++i)
    if (core::name(DType(i)) == s) return DType(i);
  core::fail(ErrorKind::kType, arg, "unsupported dtype ", s);
}

inline core::TensorView view(const TensorDesc& t, const std::string& arg) {
  const auto& [ptr, offset, dtype, shape, strides, dev, index] = t;
  DGA_REQUIRE(shape.size() <= size_t(core::kMaxDims) && shape.size() == strides.size(), kValue, arg,
              "at most ", core::kMaxDims, " dimensions are supported, got ", shape.size());
  core::TensorView v;
  v.data = reinterpret_cast<void*>(ptr);
  v.offset = offset;
  v.dtype = parse_dtype(dtype, arg);
  v.ndim = int(shape.size());
  for (int i = 0; i < v.ndim; ++i) {
    DGA_REQUIRE(shape[size_t(i)] >= 0, kValue, arg, "negative size in dimension ", i);
    DGA_REQUIRE(strides[size_t(i)] >= 0, kValue, arg, "negative stride in dimension ", i, " is not supported");
    v.shape[i] = shape[size_t(i)];
    v.strides[i] = strides[size_t(i)];
  }
  if (dev == "cpu") v.device = {core::DeviceKind::kHost, 0};
  else if (dev == "npu") v.device = {core::DeviceKind::kNpu, index};
  else core::fail(ErrorKind::kValue, arg, "tensors on '", dev, "' are not supported (use cpu or npu)");
  return v;
}

inline std::optional<core::TensorView> opt_view(const std::optional<TensorDesc>& t, const char* arg) {
  return t ? std::optional(view(*t, arg)) : std::nullopt;
}

void bind_mega_moe(nb::module_& m);
void bind_jit(nb::module_& m);
void bind_legacy(nb::module_& m);

}  // namespace deepgemm_ascend::bindings
