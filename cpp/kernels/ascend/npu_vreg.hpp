// Register-level (Reg API) constants the vector kernels share: fp32 lanes per vector register and the
// cast traits of the bf16 <-> fp32 conversions. Part of the NPU primitive layer.
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

}  // namespace deepgemm_ascend::tile::npu::vreg
