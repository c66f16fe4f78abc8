#include "validate.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace deepgemm_ascend::api {

using core::ErrorKind;
using core::fail;

void require_dtype(const TensorView& t, const char* arg, std::initializer_list<DType> allowed) {
  if (std::find(allowed.begin(), allowed.end(), t.dtype) != allowed.end()) return;
  std::string names;
  for (DType d : allowed) names += (names.empty() ? "" : " or ") + std::string(core::name(d));
  fail(ErrorKind::kType, arg, "expected dtype ", names, ", got ", core::name(t.dtype));
}

void require_rank(const TensorView& t, const char* arg, int ndim) {
  DGA_REQUIRE(t.ndim == ndim, kValue, arg, "expected a ", ndim, "-D tensor, got ", t.ndim, "-D with shape ",
              t.shape_str());
}

void require_shape(const TensorView& t, const char* arg, std::initializer_list<int64_t> shape) {
  const bool ok = int(shape.size()) == t.ndim && std::equal(shape.begin(), shape.end(), t.shape);
  if (ok) return;
  std::string want = "[";
  for (auto it = shape.begin(); it != shape.end(); ++it)
    want += (it == shape.begin() ? "" : ", ") + std::to_string(*it);
  fail(ErrorKind::kValue, arg, "expected shape ", want, "], got ", t.shape_str());
}

void require_row_major_output(const TensorView& t, const char* arg) {
  DGA_REQUIRE(t.size(-1) <= 1 || t.stride(-1) == 1, kValue, arg,
              "last dimension must be contiguous (stride(-1) == 1), got strides ", t.strides_str());
  // No two elements may share memory: sort dimensions by stride and require each stride to step
  // over everything the smaller dimensions span.
  std::vector<int> dims(size_t(t.ndim));
  std::iota(dims.begin(), dims.end(), 0);
  std::sort(dims.begin(), dims.end(), [&](int x, int y) { return t.strides[x] < t.strides[y]; });
  int64_t span = 1;
  for (int d : dims) {
    if (t.shape[d] <= 1) continue;
    DGA_REQUIRE(t.strides[d] >= span, kValue, arg, "elements overlap in memory (strides ", t.strides_str(),
                " for shape ", t.shape_str(), ")");
    span = t.strides[d] * t.shape[d];
  }
}

void require_same_device(std::initializer_list<std::pair<const char*, const TensorView*>> ts) {
  const std::pair<const char*, const TensorView*>* first = nullptr;
  for (const auto& p : ts) {
    if (!p.second) continue;
    if (!first) {
      first = &p;
      continue;
    }
    DGA_REQUIRE(p.second->device == first->second->device, kValue, p.first, "is on ", p.second->device.str(), " but ",
                first->first, " is on ", first->second->device.str(), " (all tensors must share one device)");
  }
}

void require_host(const TensorView& t, const char* arg) {
  DGA_REQUIRE(t.device.kind != core::DeviceKind::kHost || !runtime::npu_model_selected(), kNotImplemented, arg,
              "DGA_BACKEND=npu-model runs the NPU kernels on the instruction model, and this entry point has no NPU "
              "kernel yet (see the missing list in README.md); unset DGA_BACKEND for the host backend");
  require_host_memory(t, arg);
}

void require_host_memory(const TensorView& t, const char* arg) {
#ifdef DGA_WITH_NPU
  DGA_REQUIRE(t.device.kind == core::DeviceKind::kHost, kNotImplemented, arg, "is on ", t.device.str(),
              ", and this entry point has no NPU kernel yet (the NPU target implements the BF16, FP8 and "
              "FP4 GEMMs; see the missing list in README.md)");
#else
  DGA_REQUIRE(t.device.kind == core::DeviceKind::kHost, kRuntime, arg, "is on ", t.device.str(),
              ", but this build has no NPU backend (build with CANN to enable it)");
#endif
}

void require_no_overlap(const TensorView& out, const char* out_arg, const TensorView& in, const char* in_arg) {
  DGA_REQUIRE(!out.overlaps(in), kValue, out_arg, "overlaps ", in_arg, " in memory; outputs must not alias inputs");
}

}  // namespace deepgemm_ascend::api
