// JIT-specialised NPU GEMM entry: the shared GEMM kernel on the NPU target, instantiated with one tile
// configuration as constants (heuristics::StaticTiling, static_assert'ed against the Ascend 950's
// buffers), compiled by bisheng and launched through the ACL backend. The source is type-checked in CI
// (scripts/check_npu.sh); NOT compiled by bisheng or run here (no CANN).
#pragma once

#include <string>

#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/kernel/npu_params.hpp"

namespace deepgemm_ascend::jit {

// Source (an .asc translation unit) of the launcher npu_jit_launcher(family)(block_dim, stream, params)
// of one GEMM family: "bf16", "fp8_mx" (e4m3 with UE8M0 MX scales) or "fp4_mx".
std::string npu_gemm_source(const heuristics::GemmTiling& t, const std::string& family = "bf16");
std::string npu_jit_launcher(const std::string& family);
// Directory of the NPU kernel headers (cpp/kernels/ascend; in the wheel, include/deepgemm_ascend_npu).
std::string npu_kernel_dir();
// Builds (or loads) the entry for `t` with bisheng and launches it on `stream` of `device`.
void launch_npu_gemm(int device, unsigned blocks, void* stream, const DgaGemmParams& p,
                     const heuristics::GemmTiling& t, const std::string& family);

}  // namespace deepgemm_ascend::jit
