// Chooses the micro-kernels (cube, widening) of the active host ISA.
#include "deepgemm_ascend/runtime/cpu_features.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

MmadBf16Fn mmad_bf16() {
  switch (runtime::active_host_isa()) {
#if DGA_HOST_X86
    case runtime::HostIsa::kAmxBf16: return &mmad_bf16_amx;
    case runtime::HostIsa::kAvx512Bf16: return &mmad_bf16_avx512bf16;
    case runtime::HostIsa::kAvx2: return &mmad_bf16_avx2;
#endif
    default: return &mmad_bf16_scalar;
  }
}

WidenRowsFn widen_rows_fn() {
#if DGA_HOST_X86
  // Every CPU with AMX-BF16 or AVX512-BF16 has AVX-512F.
  switch (runtime::active_host_isa()) {
    case runtime::HostIsa::kAmxBf16:
    case runtime::HostIsa::kAvx512Bf16: return &widen_rows_avx512;
    default: break;
  }
#endif
  return &widen_rows_scalar;
}

SiluMulFn silu_mul_fn() {
#if DGA_HOST_X86
  switch (runtime::active_host_isa()) {
    case runtime::HostIsa::kAmxBf16:
    case runtime::HostIsa::kAvx512Bf16: return &silu_mul_avx512;
    default: break;
  }
#endif
  return &silu_mul_scalar;
}

}  // namespace deepgemm_ascend::tile::host
