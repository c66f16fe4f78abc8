// IEEE 754 binary16 conversions as constant expressions (C++17, no devkit): the arithmetic behind the runner's
// `half` (dga_half.h). A double, and so a float or an int32, rounds to binary16 once, to nearest with ties to
// even; overflow gives infinity, a NaN stays a quiet NaN with its sign and top payload bits. binary16 to
// float is exact.
#pragma once

#include <cstdint>

namespace dga_run::binary16 {

constexpr uint16_t kSign = 0x8000;
constexpr uint16_t kInf = 0x7C00;
constexpr uint16_t kQuiet = 0x0200;

// The binary16 nearest to d (ties to even).
constexpr uint16_t from_double(double d) {
  const uint64_t u = __builtin_bit_cast(uint64_t, d);
  const uint16_t sign = (u >> 63) ? kSign : 0;
  const int e = int((u >> 52) & 0x7FF);
  const uint64_t frac = u & ((uint64_t(1) << 52) - 1);
  if (e == 0x7FF) return frac ? uint16_t(sign | kInf | kQuiet | (frac >> 42)) : uint16_t(sign | kInf);
  if (e == 0 && frac == 0) return sign;
  // d = sig * 2^(exp - 52)
  const uint64_t sig = e ? (frac | (uint64_t(1) << 52)) : frac;
  const int exp = e ? e - 1023 : -1022;
  if (exp > 15) return uint16_t(sign | kInf);
  // binary16's quantum: 2^(exp - 10) for normals, 2^-24 below 2^-14
  const int shift = 42 + (exp < -14 ? -14 - exp : 0);
  if (shift > 63) return sign;  // below half the smallest subnormal
  const uint64_t q = sig >> shift;
  const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
  const uint64_t halfway = uint64_t(1) << (shift - 1);
  const uint64_t r = q + ((rem > halfway || (rem == halfway && (q & 1))) ? 1 : 0);
  // Normals: q carries the hidden bit (2^10), which adds one to the biased exponent exp + 14; a rounding carry
  // to 2^11 moves to the next binade, past the largest finite value to infinity.
  const uint64_t bits = exp < -14 ? r : (uint64_t(exp + 14) << 10) + r;
  return uint16_t(sign | (bits >= kInf ? kInf : bits));
}

constexpr float to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & kSign) << 16;
  const uint32_t e = (h >> 10) & 0x1F;
  const uint32_t m = h & 0x3FF;
  if (e == 0x1F) return __builtin_bit_cast(float, sign | 0x7F800000u | (m << 13));
  if (e == 0) {
    const float v = float(m) * (1.0f / 16777216.0f);  // m * 2^-24, exact
    return sign ? -v : v;
  }
  return __builtin_bit_cast(float, sign | ((e + 112) << 23) | (m << 13));
}

}  // namespace dga_run::binary16
