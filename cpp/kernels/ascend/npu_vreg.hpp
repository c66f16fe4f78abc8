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

// dst[i] = D(src[i]) for i < n, between fp32 and bf16 (contiguous runs; to bf16: RINT, IEEE under
// IeeeCasts; to fp32: exact).
template <class Arch, class D, class S>
__simd_vf__ inline void convert(__ubuf__ D* dst, __ubuf__ S* src, uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = kLanes<Arch>;
  constexpr bool kToBf16Run = sizeof(D) == sizeof(bfloat16_t);
  R::RegTensor<S> x;
  R::RegTensor<D> y;
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    if constexpr (kToBf16Run) {
      R::LoadAlign(x, src + i * kL);
      R::Cast<D, S, kToBf16>(y, x, m);
      R::StoreAlign<D, R::StoreDist::DIST_PACK_B32>(dst + i * kL, y, m);
    } else {
      R::LoadAlign<S, R::LoadDist::DIST_UNPACK_B16>(x, src + i * kL);
      R::Cast<D, S, kToF32>(y, x, m);
      R::StoreAlign(dst + i * kL, y, m);
    }
  }
}

}  // namespace deepgemm_ascend::tile::npu::vreg
