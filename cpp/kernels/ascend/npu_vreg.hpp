// Register-level (Reg API) pieces the vector kernels share: fp32 lanes per vector register, the cast
// traits of the bf16 <-> fp32 conversions and the conversions of a UB run. Part of the NPU primitive layer.
#pragma once

#include "kernel_operator.h"

namespace deepgemm_ascend::tile::npu::vreg {

template <class Arch>
constexpr uint32_t kLanes = Arch::kVectorRegBytes / sizeof(float);
// fp32 -> bf16 into the even 16-bit slots, round to nearest even (RINT), no saturation.
constexpr AscendC::Reg::CastTrait kToBf16 = {AscendC::Reg::RegLayout::ZERO, AscendC::Reg::SatMode::NO_SAT,
                                             AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::CAST_RINT};
// bf16 (even 16-bit slots) -> fp32, exact.
constexpr AscendC::Reg::CastTrait kToF32 = {AscendC::Reg::RegLayout::ZERO, AscendC::Reg::SatMode::UNKNOWN,
                                            AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::UNKNOWN};

// dst[i] = bf16(src[i]) for i < n (contiguous bf16; IEEE under IeeeCasts).
template <class Arch>
__simd_vf__ inline void to_bf16(__ubuf__ bfloat16_t* dst, __ubuf__ float* src, uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<float> x;
  R::RegTensor<bfloat16_t> y;
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign(x, src + i * kL);
    R::Cast<bfloat16_t, float, vreg::kToBf16>(y, x, m);
    R::StoreAlign<bfloat16_t, R::StoreDist::DIST_PACK_B32>(dst + i * kL, y, m);
  }
}

// dst[i] = float(src[i]) for i < n (exact).
template <class Arch>
__simd_vf__ inline void to_f32(__ubuf__ float* dst, __ubuf__ bfloat16_t* src, uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<bfloat16_t> x;
  R::RegTensor<float> y;
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign<bfloat16_t, R::LoadDist::DIST_UNPACK_B16>(x, src + i * kL);
    R::Cast<float, bfloat16_t, vreg::kToF32>(y, x, m);
    R::StoreAlign(dst + i * kL, y, m);
  }
}

}  // namespace deepgemm_ascend::tile::npu::vreg
