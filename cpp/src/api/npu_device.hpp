// Where the NPU kernels of a call run: an Ascend device through the ACL backend (npu tensors), or the
// instruction model (the npu-model backend, CPU tensors; runtime/npu_model.hpp). The NPU dispatch plans,
// copies and launches through this, so both run the same launch parameters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "deepgemm_ascend/core/tensor_view.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/heuristics/npu_arch.hpp"
#include "deepgemm_ascend/kernel/npu_gemm_families.hpp"

namespace deepgemm_ascend::api {

// True when `t`'s call runs the NPU kernels: an npu tensor, or a CPU tensor under DGA_BACKEND=npu-model.
bool on_npu_target(const core::TensorView& t);

class NpuDevice {
 public:
  // The device of output `d` (named `arg` in errors); fails when no NPU backend can run it.
  NpuDevice(const core::TensorView& d, const char* arg);

  bool model() const { return model_; }
  // The arch the launches run on, which every plan for them takes: the kernels library's arch on a device,
  // the Ascend 950 on the instruction model.
  const heuristics::NpuArch& arch() const;
  int cube_cores() const;
  // rows x row_bytes from src to dst (ordered before later launches on the device's stream).
  void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes, size_t rows) const;
  // The launcher of (family, kind) (kernel/npu_gemm_families.hpp) on `blocks` cores; `macs` bounds the
  // multiply-adds (the model refuses launches above runtime::npu_model_max_macs()).
  void launch_gemm(unsigned blocks, const void* params, const kernel::GemmTiling& t, kernel::NpuGemmFamily family,
                   kernel::NpuGemmKind kind, int64_t macs) const;
  // Vector cores of the device (AIV-only kernels take one block per vector core).
  int vector_cores() const;
  // Launcher `entry` (dga_npu_launch_<kernel>) on `blocks` cores; `work` bounds its element operations
  // (the model refuses launches above runtime::npu_model_max_macs()).
  void launch(const std::string& entry, unsigned blocks, const void* params, int64_t work) const;
  // Device memory of at least `bytes`, 512 B aligned, for the kernels of this call: valid until the next
  // workspace request on this device and stream (launches on one stream run in order). On a device a
  // per-stream buffer that grows (the stream is synchronised before a smaller one is freed); on the model
  // a per-thread host buffer that grows.
  void* workspace(size_t bytes) const;

 private:
  int index_ = 0;
  bool model_ = false;
};

}  // namespace deepgemm_ascend::api
