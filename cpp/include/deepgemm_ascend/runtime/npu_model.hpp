// The npu-model backend: CPU tensors run the NPU kernels (cpp/npu, compiled with the host
// compiler against the AscendC devkit headers) on the instruction model (npu_model/), core after core.
// Selected by DGA_BACKEND=npu-model or set_backend("npu-model"); the kernels live in libdga_npu_model.so
// next to this library (or at DGA_NPU_MODEL_LIB), built when the devkit was found at configure time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace deepgemm_ascend::runtime {

// "host" (the default) or "npu-model".
std::string backend();
void set_backend(const std::string& name);
bool npu_model_selected();

// Whether the model library loads, and why not.
bool npu_model_available();
std::string npu_model_unavailable_reason();
std::string npu_model_library_path();

// A span of global memory a launch may touch (a tensor's bytes, a workspace).
struct GmRegion {
  std::string name;
  const void* base = nullptr;
  size_t bytes = 0;
};

// Runs launcher `entry` (a dga_npu_launch_* name) on `blocks` cores of the model; a model error (an
// instruction outside its documented range, an event protocol violation) throws naming core and pipe.
// With `gm` regions, a DMA's GM access outside all of them is such an error too (the bounds checker).
void npu_model_launch(const std::string& entry, unsigned blocks, const void* params,
                      const std::vector<GmRegion>& gm = {});
// The launchers npu_model_launch was asked to run since the last call, oldest first (the dispatch test
// checks which NPU kernel each entry point reaches); reading clears the log.
std::vector<std::string> take_npu_model_launches();

// The most multiply-accumulates one launch may run on the model (it interprets every instruction):
// DGA_NPU_MODEL_MAX_MACS, default 2^34 (a few seconds for a BF16 GEMM on one host core); no limit in the
// timing-only mode, which does not run the arithmetic.
int64_t npu_model_max_macs();
// The model's timing-only mode (DGA_NPU_MODEL_TIMING and DGA_NPU_MODEL_TIMING_ONLY set): launches are timed
// (cpp/npu_model/shim/model_timing.hpp), their results not computed.
bool npu_model_timing_only();

}  // namespace deepgemm_ascend::runtime
