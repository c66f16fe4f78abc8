// Exact power-of-two scales folded into widened operands: the host's form of the 950 MX cube's scaling.
// A scale 2^e multiplies a bf16 value exactly by adding e to its exponent field as long as the result stays
// a normal bf16. Widened e4m3 / e5m2 / e2m1 values lie within [2^-16, 2^16) (or are zero or NaN / Inf), so
// every |e| <= kMaxFoldExponent keeps them normal. A product of two folded values is then the product of the
// unscaled ones times 2^(ea + eb), which promotion (tile/promotion.hpp) applies to a K block's sum instead: the
// two differ only in the rounding of the fp32 sums.
#pragma once

#include <climits>
#include <cstdint>
#include <cstring>

#include "deepgemm_ascend/layout/scale_ref.hpp"

namespace deepgemm_ascend::layout {

inline constexpr int kMaxFoldExponent = 100;
inline constexpr int kNotFoldable = INT_MIN;

// e where s == 2^e with |e| <= kMaxFoldExponent, else kNotFoldable (zero, negative, NaN, not a power of two).
inline int fold_exponent(float s) {
  constexpr int kMantissaBits = 23, kBias = 127;
  constexpr uint32_t kMantissa = (1u << kMantissaBits) - 1, kField = 0xFF;
  uint32_t bits;
  std::memcpy(&bits, &s, sizeof bits);
  const uint32_t field = (bits >> kMantissaBits) & kField;
  // Positive, normal, no mantissa bits: exactly 2^(field - bias).
  if ((bits >> 31) != 0 || (bits & kMantissa) != 0 || field == 0 || field == kField) return kNotFoldable;
  const int e = int(field) - kBias;
  return e >= -kMaxFoldExponent && e <= kMaxFoldExponent ? e : kNotFoldable;
}

// bf16's exponent field, and what multiplying a bf16 code by a folding scale adds to it: e << 7, modulo 2^16 (a
// negative e borrows only from the exponent field, which stays normal); 0 for a scale that does not fold. The
// addition applies to nonzero finite codes only: zero, NaN and Inf (field 0 or all ones) keep their codes.
inline constexpr uint16_t kBf16ExponentField = 0x7F80;
// The step of 2^e: e << 7 for |e| <= kMaxFoldExponent, else 0 (kNotFoldable included).
inline uint16_t exponent_step(int e) {
  constexpr int kBf16MantissaBits = 7;
  return e >= -kMaxFoldExponent && e <= kMaxFoldExponent ? uint16_t(unsigned(e) << kBf16MantissaBits) : 0;
}
inline uint16_t fold_step(float s) { return exponent_step(fold_exponent(s)); }
// fold_step of the UE8M0 code c (2^(c - bias)), without going through its float.
inline uint16_t fold_step_code(uint8_t c) { return exponent_step(int(c) - ScaleRef::kBias); }

// Whether every scale that a rows x k operand reads through s (rows of s: ceil(rows / gran_mn), K blocks:
// ceil(k / gran_k)) folds.
bool all_scales_fold(const ScaleRef& s, int64_t rows, int64_t k);

}  // namespace deepgemm_ascend::layout
