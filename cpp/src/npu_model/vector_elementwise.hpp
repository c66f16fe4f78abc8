// The element-wise loops of the vector core's float micro-ops (vector.cpp, vector_select.cpp,
// vector_math.cpp): one operation per active b32 element, inactive elements 0 (or kept: vadd's MERGING).
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

}  // namespace deepgemm_ascend::npu_model
