// The C ABI over the C++ API: handles own a TensorView, exceptions become status codes and a
// per-thread message.
#include "deepgemm_ascend/c_api.h"

#include <exception>
#include <new>
#include <string>

#include "deepgemm_ascend/api.hpp"

struct dga_tensor_s {
  deepgemm_ascend::TensorView view;
};

namespace {

namespace dga = deepgemm_ascend;
using dga::core::DType;

thread_local std::string g_error;

// Guarded call: the status of fn(), the message of its exception.
template <class Fn>
dga_status guarded(Fn&& fn) {
  g_error.clear();
  try {
    fn();
    return DGA_OK;
  } catch (const dga::core::Error& e) {
    g_error = e.what();
    switch (e.kind()) {
      case dga::core::ErrorKind::kType: return DGA_ERROR_TYPE;
      case dga::core::ErrorKind::kValue: return DGA_ERROR_VALUE;
      case dga::core::ErrorKind::kRuntime: return DGA_ERROR_RUNTIME;
      case dga::core::ErrorKind::kNotImplemented: return DGA_ERROR_NOT_IMPLEMENTED;
    }
  } catch (const std::exception& e) { g_error = e.what(); } catch (...) {
    g_error = "unknown exception";
  }
  return DGA_ERROR_INTERNAL;
}

DType dtype_of(int d) {
  switch (d) {
    case DGA_BF16: return DType::kBF16;
    case DGA_FP16: return DType::kFP16;
    case DGA_FP32: return DType::kFP32;
    case DGA_FP8_E4M3: return DType::kFP8E4M3;
    case DGA_FP8_E5M2: return DType::kFP8E5M2;
    case DGA_FP4_E2M1X2: return DType::kFP4E2M1x2;
    case DGA_INT8: return DType::kInt8;
    case DGA_UINT8: return DType::kUInt8;
    case DGA_INT16: return DType::kInt16;
    case DGA_INT32: return DType::kInt32;
    case DGA_INT64: return DType::kInt64;
  }
  dga::core::fail(dga::core::ErrorKind::kType, "dtype", "unknown dtype code ", int(d));
}

const dga::TensorView& ref(dga_tensor t, const char* arg) {
  DGA_REQUIRE(t != nullptr, kValue, arg, "is NULL");
  return t->view;
}
const dga::TensorView* opt(dga_tensor t) { return t ? &t->view : nullptr; }

}  // namespace

extern "C" {

dga_status dga_tensor_create(void* data, int dtype, int ndim, const int64_t* shape, const int64_t* strides,
                             dga_tensor* out) {
  return guarded([&] {
    DGA_REQUIRE(out != nullptr, kValue, "out", "is NULL");
    *out = nullptr;
    DGA_REQUIRE(ndim >= 1 && ndim <= dga::core::kMaxDims, kValue, "ndim", "must be in [1, ", dga::core::kMaxDims,
                "], got ", ndim);
    DGA_REQUIRE(shape != nullptr, kValue, "shape", "is NULL");
    dga::TensorView v;
    v.data = data;
    v.dtype = dtype_of(dtype);
    v.ndim = ndim;
    int64_t contiguous = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      DGA_REQUIRE(shape[i] >= 0, kValue, "shape", "dimension ", i, " is negative (", shape[i], ")");
      v.shape[i] = shape[i];
      v.strides[i] = strides ? strides[i] : contiguous;
      DGA_REQUIRE(v.strides[i] >= 0, kValue, "strides", "dimension ", i, " is negative (", v.strides[i], ")");
      contiguous *= shape[i];
    }
    DGA_REQUIRE(data != nullptr || contiguous == 0, kValue, "data", "is NULL for a non-empty tensor");
    *out = new dga_tensor_s{v};
  });
}

void dga_tensor_destroy(dga_tensor t) { delete t; }

dga_status dga_bf16_gemm(const char* layout, dga_tensor a, dga_tensor b, dga_tensor d, dga_tensor c) {
  return guarded([&] {
    DGA_REQUIRE(layout != nullptr, kValue, "layout", "is NULL");
    dga::bf16_gemm(layout, ref(a, "a"), ref(b, "b"), ref(d, "d"), opt(c));
  });
}

dga_status dga_fp8_fp4_gemm(const char* layout, dga_tensor a, dga_tensor sfa, dga_tensor b, dga_tensor sfb,
                            dga_tensor d, dga_tensor c, int64_t gran_m, int64_t gran_k_a, int64_t gran_n,
                            int64_t gran_k_b) {
  return guarded([&] {
    DGA_REQUIRE(layout != nullptr, kValue, "layout", "is NULL");
    dga::fp8_fp4_gemm(layout, ref(a, "a"), ref(sfa, "sfa"), ref(b, "b"), ref(sfb, "sfb"), ref(d, "d"), opt(c),
                      {gran_m, gran_k_a}, {gran_n, gran_k_b});
  });
}

const char* dga_last_error(void) { return g_error.c_str(); }
const char* dga_version(void) { return dga::version(); }
int dga_get_num_ai_cores(void) { return dga::get_num_ai_cores(); }
dga_status dga_set_num_ai_cores(int n) {
  return guarded([&] { dga::set_num_ai_cores(n); });
}

}  // extern "C"
