#include "npu_device.hpp"

#include <cstring>
#include <vector>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/jit/npu_gemm_jit.hpp"
#include "deepgemm_ascend/runtime/acl_backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace deepgemm_ascend::api {

bool on_npu_target(const core::TensorView& t) {
  return t.device.kind == core::DeviceKind::kNpu ||
         (t.device.kind == core::DeviceKind::kHost && runtime::npu_model_selected());
}

NpuDevice::NpuDevice(const core::TensorView& d, const char* arg)
    : index_(d.device.index), model_(d.device.kind != core::DeviceKind::kNpu) {
  if (model_) {
    DGA_REQUIRE(runtime::npu_model_available(), kRuntime, arg, "DGA_BACKEND=npu-model, but ",
                runtime::npu_model_unavailable_reason());
  } else {
    DGA_REQUIRE(runtime::npu_backend_built(), kRuntime, arg, "is on ", d.device.str(), ", but ",
                runtime::npu_unavailable_reason());
  }
}

const heuristics::NpuArch& NpuDevice::arch() const {
  return heuristics::npu_arch(model_ ? std::string(arch::Ascend950::kTarget) : runtime::npu_kernels_arch());
}

// The model plans for its arch's cube cores (it runs them one after the other).
int NpuDevice::cube_cores() const {
  return model_ ? arch().default_cube_cores : runtime::npu_cube_cores(index_);
}

void NpuDevice::copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                          size_t rows) const {
  if (!model_)
    return runtime::npu_copy_rows_async(index_, dst, dst_pitch, src, src_pitch, row_bytes, rows,
                                        runtime::current_npu_stream());
  for (size_t r = 0; r < rows; ++r)
    std::memmove(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, row_bytes);
}

int NpuDevice::vector_cores() const { return cube_cores() * arch().vector_cores_per_cube; }

void NpuDevice::launch(const std::string& entry, unsigned blocks, const void* params, int64_t work) const {
  if (model_) {
    const int64_t budget = runtime::npu_model_max_macs();
    DGA_REQUIRE(work <= budget, kNotImplemented, "npu-model", entry, " would run ", work,
                " element operations on the instruction model, more than its budget of ", budget,
                " (DGA_NPU_MODEL_MAX_MACS): too large for the model");
    return runtime::npu_model_launch(entry, blocks, params);
  }
  runtime::npu_launch(index_, entry.c_str(), blocks, runtime::current_npu_stream(), params);
}

void* NpuDevice::workspace(size_t bytes) const {
  constexpr size_t kAlign = 512;
  if (!model_) return runtime::npu_workspace(index_, runtime::current_npu_stream(), bytes);
  thread_local std::vector<uint8_t> host;  // the model's "stream" is the calling thread
  if (host.size() < bytes + kAlign) host.assign(bytes + kAlign, 0);
  const auto at = reinterpret_cast<uintptr_t>(host.data());
  return reinterpret_cast<void*>((at + kAlign - 1) / kAlign * kAlign);
}

// DGA_JIT=1 specialises the entry for the tiling on a device; the model runs the precompiled launchers
// with the tiling in their parameters.
void NpuDevice::launch_gemm(unsigned blocks, const void* params, const kernel::GemmTiling& t,
                            kernel::NpuGemmFamily family, kernel::NpuGemmKind kind, int64_t macs) const {
  const std::string entry = kernel::npu_gemm_symbols(family, kind).launcher;
  if (model_) {
    const int64_t budget = runtime::npu_model_max_macs();
    DGA_REQUIRE(macs <= budget, kNotImplemented, "npu-model", entry, " would run ", macs,
                " multiply-adds on the instruction model, more than its budget of ", budget,
                " (DGA_NPU_MODEL_MAX_MACS): too large for the model");
    return runtime::npu_model_launch(entry, blocks, params);
  }
  void* stream = runtime::current_npu_stream();
  if (runtime::jit_gemm()) return jit::launch_npu_gemm(index_, blocks, stream, params, t, family, kind);
  runtime::npu_launch(index_, entry.c_str(), blocks, stream, params);
}

}  // namespace deepgemm_ascend::api
