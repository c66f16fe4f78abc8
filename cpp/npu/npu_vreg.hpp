// Register-level (Reg API) pieces the vector kernels share: fp32 lanes per vector register, the cast
// traits of the bf16 <-> fp32, fp32 -> e4m3 and fp4 -> bf16 conversions and the conversions of a UB run
// (fp32 <-> bf16, packed FP4 -> e4m3). Part of the NPU primitive layer.
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

// bf16 (odd 16-bit slots) -> fp32, exact.
constexpr AscendC::Reg::CastTrait kOddsToF32 = {AscendC::Reg::RegLayout::ONE, AscendC::Reg::SatMode::UNKNOWN,
                                                AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::UNKNOWN};
// fp32 -> e4m3 into byte 0 (kToE4m3) or 1 (kToE4m3Byte1) of each 32-bit slot, RINT, saturating: |x| >= 448
// -> +-448 (the host's float_to_e4m3).
constexpr AscendC::Reg::CastTrait kToE4m3 = {AscendC::Reg::RegLayout::ZERO, AscendC::Reg::SatMode::SAT,
                                             AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::CAST_RINT};
constexpr AscendC::Reg::CastTrait kToE4m3Byte1 = {AscendC::Reg::RegLayout::ONE, AscendC::Reg::SatMode::SAT,
                                                  AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::CAST_RINT};
// fp4x2 e2m1 in byte 0 of each 32-bit slot (as LoadAlign's UNPACK4_B8 leaves it) -> two bf16, exact.
constexpr AscendC::Reg::CastTrait kFp4ToBf16 = {AscendC::Reg::RegLayout::ZERO, AscendC::Reg::SatMode::UNKNOWN,
                                                AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::UNKNOWN};

// inside: the lanes of m whose column c0 + j lies in [lo, hi).
__simd_callee__ inline void column_range(AscendC::Reg::MaskReg& inside, int32_t c0, int32_t lo, int32_t hi,
                                         AscendC::Reg::MaskReg& m) {
  namespace R = AscendC::Reg;
  R::RegTensor<int32_t> col;
  R::MaskReg ge, lt;
  R::Arange(col, c0);
  R::Compares<int32_t, AscendC::CMPMODE::GE>(ge, col, lo, m);
  R::Compares<int32_t, AscendC::CMPMODE::LT>(lt, col, hi, m);
  R::MaskAnd(inside, ge, lt, m);
}

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

// Packed FP4 e2m1 (value 2 i in the low nibble of byte i) -> fp8 e4m3, exact: n values (even) from the n / 2
// bytes at src to the n bytes at dst. Per step of 2 x lanes values: each byte to a 32-bit slot (UNPACK4_B8),
// its two nibbles to bf16, the evens and the odds to fp32, to e4m3 in bytes 0 and 1 of the slots, or-ed
// together, the slots' low 16 bits stored contiguously (PACK_B32).
template <class Arch>
__simd_vf__ inline void widen_fp4(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src, uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kPairs = kLanes<Arch>, kValues = 2 * kPairs;
  R::RegTensor<fp4x2_e2m1_t> x;
  R::RegTensor<bfloat16_t> h;
  R::RegTensor<float> even, odd;
  R::RegTensor<fp8_e4m3fn_t> lo, hi;
  uint32_t values = n, pairs = n / 2;
  const uint16_t steps = uint16_t((n + kValues - 1) / kValues);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg mh = R::UpdateMask<bfloat16_t>(values);  // bit 4 j (the pair's byte) and 4 j + 2 (its odd value)
    R::MaskReg m = R::UpdateMask<float>(pairs);
    R::LoadAlign<uint8_t, R::LoadDist::DIST_UNPACK4_B8>((R::RegTensor<uint8_t>&)x, src + i * kPairs);
    R::Cast<bfloat16_t, fp4x2_e2m1_t, kFp4ToBf16>(h, x, mh);
    R::Cast<float, bfloat16_t, kToF32>(even, h, mh);
    R::Cast<float, bfloat16_t, kOddsToF32>(odd, h, mh);
    R::Cast<fp8_e4m3fn_t, float, kToE4m3>(lo, even, m);
    R::Cast<fp8_e4m3fn_t, float, kToE4m3Byte1>(hi, odd, m);
    auto& word = (R::RegTensor<uint32_t>&)lo;
    R::Or(word, word, (R::RegTensor<uint32_t>&)hi, m);
    R::StoreAlign<uint16_t, R::StoreDist::DIST_PACK_B32>((__ubuf__ uint16_t*)(dst + i * kValues),
                                                        (R::RegTensor<uint16_t>&)lo, m);
  }
}

}  // namespace deepgemm_ascend::tile::npu::vreg
