// The element-wise loops of the vector core's float micro-ops (vector.cpp, vector_select.cpp,
// vector_math.cpp, vector_cast.cpp): one operation per active b32 element, inactive elements 0 (or kept: vadd's MERGING).
#pragma once

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"

namespace deepgemm_ascend::npu_model {

// The b32 (float, int32) elements of one vector register.
inline constexpr size_t kB32Elements = kVregBytes / sizeof(uint32_t);

template <class F>
void VectorCore::binary(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge, F op) const {
  for (size_t i = 0; i < kB32Elements; ++i) {
    if (active(mask, i, Width::kB32)) dst.set<float>(i, op(a.get<float>(i), b.get<float>(i)));
    else if (merge == Merge::kZeroing) dst.set<float>(i, 0.0f);
  }
}

template <class F>
void VectorCore::unary_f32(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge, const char* what, F op) const {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", what, " supports ZEROING only");
  Vreg out;  // dst may be src
  for (size_t i = 0; i < kB32Elements; ++i)
    if (active(mask, i, Width::kB32)) out.set<float>(i, op(src.get<float>(i)));
  dst = out;
}

// A cast of the active b32 float elements to 16-bit codes (f32 -> bf16 / f16): element i to b16 element
// 2 i + part (RegLayout.md, cast_b32_to_b16), every other element 0 (ZEROING).
template <class F>
void VectorCore::narrow_to_b16(Vreg& dst, const Vreg& src, uint16_t mask, Part part, F code) const {
  Vreg out;  // dst may be src
  for (size_t i = 0; i < kB32Elements; ++i)
    if (active(mask, i, Width::kB32)) out.set<uint16_t>(2 * i + size_t(part), code(src.get<float>(i)));
  dst = out;
}

}  // namespace deepgemm_ascend::npu_model
