// JIT-specialised NPU GEMM entries: the shared GEMM kernel on the NPU target, instantiated with one tile
// configuration as constants (kernel::StaticTiling, static_assert'ed against the Ascend 950's
// buffers), compiled by bisheng and launched through the ACL backend. The source is type-checked in CI
// (scripts/check_npu.sh); NOT compiled by bisheng or run here (no CANN).
#pragma once

#include <string>

#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/kernel/npu_params.hpp"

namespace deepgemm_ascend::jit {

// Source (an .asc translation unit) of the launcher npu_jit_launcher(family, kind)(block_dim, stream,
// params) of one GEMM family ("bf16", "fp8_mx" / "fp4_mx": UE8M0 MX scales, "fp8_block": fp32 block
// scales, a mix kernel) and entry kind ("" dense, "masked", "contiguous", "k_grouped"; the params
// struct of kernel/npu_params.hpp that goes with it).
std::string npu_gemm_source(const heuristics::GemmTiling& t, const std::string& family = "bf16",
                            const std::string& kind = "");
std::string npu_jit_launcher(const std::string& family, const std::string& kind = "");
// Directory of the NPU kernel headers (cpp/kernels/ascend; in the wheel, include/deepgemm_ascend_npu).
std::string npu_kernel_dir();
// Builds (or loads) the entry for `t` with bisheng and launches it on `stream` of `device`.
void launch_npu_gemm(int device, unsigned blocks, void* stream, const void* params, const heuristics::GemmTiling& t,
                     const std::string& family, const std::string& kind);

}  // namespace deepgemm_ascend::jit
