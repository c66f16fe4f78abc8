// Chooses the micro-kernels (cube and its calibration loop, widening, interleave, SwiGLU) of the active host ISA.
#include "deepgemm_ascend/core/cpu_features.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {
// The cube micro-kernel of each host ISA, the calibration loop of its instruction and its L0A K grouping,
// chosen together.
struct Cube {
  MmadBf16Fn mmad;
  PeakLoopFn peak;
  int l0a_k_group;
};
Cube cube() {
  switch (tile::host::active_host_isa()) {
#if DGA_HOST_X86
    case tile::host::HostIsa::kAmxBf16: return {&mmad_bf16_amx, &peak_loop_amx, kK32Group};
    case tile::host::HostIsa::kAvx512Bf16: return {&mmad_bf16_avx512bf16, &peak_loop_avx512bf16, kNzKGroup};
    case tile::host::HostIsa::kAvx512: return {&mmad_bf16_avx512, &peak_loop_avx512, kNzKGroup};
    case tile::host::HostIsa::kAvx2: return {&mmad_bf16_avx2, &peak_loop_avx2, kNzKGroup};
#endif
    default: return {&mmad_bf16_scalar, &peak_loop_scalar, kNzKGroup};
  }
}
}  // namespace

MmadBf16Fn mmad_bf16() { return cube().mmad; }
PeakLoopFn peak_loop_fn() { return cube().peak; }
int l0a_k_group() { return cube().l0a_k_group; }

namespace {
// The AVX-512 helper kernels (AVX-512F/BW/VL) run wherever the active ISA is AMX-BF16, AVX512-BF16 or
// AVX-512: every CPU with either of the first two has them, and the third requires them.
bool avx512_active() {
#if DGA_HOST_X86
  const auto isa = tile::host::active_host_isa();
  return isa == tile::host::HostIsa::kAmxBf16 || isa == tile::host::HostIsa::kAvx512Bf16 || isa == tile::host::HostIsa::kAvx512;
#else
  return false;
#endif
}
// The AVX2 helpers run where the active ISA is AVX2 (every AVX-512 CPU has AVX2 too, but there the
// AVX-512 helpers are chosen).
bool avx2_active() {
#if DGA_HOST_X86
  return tile::host::active_host_isa() == tile::host::HostIsa::kAvx2;
#else
  return false;
#endif
}
// Byte permutes for the AVX-512 widening's tables (with the AVX-512 helpers only).
bool vbmi() { return core::cpu_features().avx512vbmi; }
}  // namespace

WidenRowsFn widen_rows_fn() {
#if DGA_HOST_X86
  if (avx512_active()) return vbmi() ? &widen_rows_avx512vbmi : &widen_rows_avx512;
  if (avx2_active()) return &widen_rows_avx2;
#endif
  return &widen_rows_scalar;
}

WidenFoldFn widen_fold_fn() {
#if DGA_HOST_X86
  if (avx512_active()) return vbmi() ? &widen_fold_avx512vbmi : &widen_fold_avx512;
  if (avx2_active()) return &widen_fold_avx2;
#endif
  return nullptr;
}

InterleaveFn interleave_k_pairs_fn() {
#if DGA_HOST_X86
  if (avx512_active()) return &interleave_k_pairs_avx512;
  if (avx2_active()) return &interleave_k_pairs_avx2;
#endif
  return &interleave_k_pairs_scalar;
}

SwigluKernels swiglu_kernels() {
#if DGA_HOST_X86
  if (avx512_active()) return {&silu_mul_avx512, &group_amax_avx512, &encode_e4m3_avx512};
#endif
  return {&silu_mul_scalar, &group_amax_scalar, &encode_e4m3_scalar};
}

}  // namespace deepgemm_ascend::tile::host
