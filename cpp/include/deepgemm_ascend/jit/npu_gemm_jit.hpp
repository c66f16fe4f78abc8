// JIT-specialised NPU GEMM entries: the shared GEMM kernel on the NPU target, instantiated with one tile
// configuration as constants (kernel::StaticTiling, static_assert'ed against the Ascend 950's
// buffers), compiled by bisheng and launched through the ACL backend. The source is type-checked in CI
// (scripts/check_npu.sh); NOT compiled by bisheng or run here (no CANN).
#pragma once

#include <string>

#include "deepgemm_ascend/kernel/npu_gemm_families.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/kernel/tiling.hpp"

namespace deepgemm_ascend::jit {

// A family and a kind (kernel/npu_gemm_families.hpp) by name; kind "" is the dense GEMM.
kernel::NpuGemmFamily npu_gemm_family(const std::string& name);
kernel::NpuGemmKind npu_gemm_kind(const std::string& name);
// Source (an .asc translation unit) of the JIT launcher of one GEMM family ("bf16", "fp8_mx" / "fp4_mx":
// UE8M0 MX scales, "fp8_block": fp32 block scales, a mix kernel) and entry kind (with the params struct
// of kernel/launch_abi.hpp that goes with it), and that launcher's name.
std::string npu_gemm_source(const kernel::GemmTiling& t, kernel::NpuGemmFamily family, kernel::NpuGemmKind kind);
std::string npu_gemm_source(const kernel::GemmTiling& t, const std::string& family = "bf16",
                            const std::string& kind = "");
std::string npu_jit_launcher(const std::string& family, const std::string& kind = "");
// Directory of the NPU kernel headers (cpp/npu; in the wheel, include/deepgemm_ascend_npu).
std::string npu_kernel_dir();
// Builds (or loads) the entry for `t` with bisheng and launches it on `stream` of `device`.
void launch_npu_gemm(int device, unsigned blocks, void* stream, const void* params, const kernel::GemmTiling& t,
                     kernel::NpuGemmFamily family, kernel::NpuGemmKind kind);

}  // namespace deepgemm_ascend::jit
