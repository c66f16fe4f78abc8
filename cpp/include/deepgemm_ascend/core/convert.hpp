// Exact scalar conversions between float and the library's narrow formats.
//
// Every encoder rounds to nearest, ties to even. Formats without infinities saturate:
//   E4M3FN -> +-448 (also for +-inf, as torch does), NaN -> 0x7F | sign.
//   E2M1   -> +-6; it has no NaN either, so NaN converts to +0.
//   UE8M0  -> 2^127 (code 254) for values and +inf beyond it; zero and values below 2^-127 -> code 0;
//             negative values and NaN -> 0xFF (NaN). "Even" is the exponent code (the format has no
//             mantissa): 1.5 * 2^e rounds to whichever of 2^e, 2^(e+1) has an even code.
// Formats with infinities (FP16, E5M2, BF16) overflow to +-inf, as IEEE rounding does.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "deepgemm_ascend/core/macros.hpp"

namespace deepgemm_ascend::core {

DGA_HOST_DEVICE uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
DGA_HOST_DEVICE float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// ---- bfloat16 -------------------------------------------------------------------------------
DGA_HOST_DEVICE uint16_t float_to_bf16(float f) {
  // Branch-free (a select, not a branch), so that loops of conversions vectorise.
  const uint32_t u = float_bits(f);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x0040u;
  return uint16_t((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded);
}
DGA_HOST_DEVICE float bf16_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }

// ---- TF32 (fp32 with 10 mantissa bits, as the tensor cores and the 950's HF32 read fp32) ---------
DGA_HOST_DEVICE float round_to_tf32(float f) {
  constexpr uint32_t kDropBits = 13, kHalf = 1u << (kDropBits - 1), kMask = ~((1u << kDropBits) - 1);
  uint32_t u = float_bits(f);
  if ((u & 0x7F800000u) == 0x7F800000u) return f;  // inf / NaN unchanged
  u += kHalf - 1 + ((u >> kDropBits) & 1u);
  return bits_float(u & kMask);
}

// ---- generic small IEEE-like formats ---------------------------------------------------------
struct MiniFloat {
  int exp_bits;
  int man_bits;
  bool has_inf;       // all-ones exponent is inf/NaN (IEEE style)
  bool nan_all_ones;  // E4M3FN: only S.1111.111 is NaN, the rest of the top binade is finite
  bool has_nan;
};
inline constexpr MiniFloat kFP16Format{.exp_bits = 5, .man_bits = 10, .has_inf = true, .nan_all_ones = false,
                                       .has_nan = true};
inline constexpr MiniFloat kE5M2Format{.exp_bits = 5, .man_bits = 2, .has_inf = true, .nan_all_ones = false,
                                       .has_nan = true};
inline constexpr MiniFloat kE4M3Format{.exp_bits = 4, .man_bits = 3, .has_inf = false, .nan_all_ones = true,
                                       .has_nan = true};
inline constexpr MiniFloat kE2M1Format{.exp_bits = 2, .man_bits = 1, .has_inf = false, .nan_all_ones = false,
                                       .has_nan = false};

namespace detail {

constexpr int bias(const MiniFloat& f) { return (1 << (f.exp_bits - 1)) - 1; }

// Largest finite magnitude code (without sign).
constexpr uint32_t max_code(const MiniFloat& f) {
  uint32_t all = (1u << (f.exp_bits + f.man_bits)) - 1;
  if (f.has_inf) return all - (1u << f.man_bits);  // exponent all-ones minus one, mantissa all-ones
  if (f.nan_all_ones) return all - 1;
  return all;
}

DGA_HOST_DEVICE double round_half_even(double x) {  // x >= 0 and < 2^52
  double fl = std::floor(x);
  double d = x - fl;
  if (d > 0.5 || (d == 0.5 && std::fmod(fl, 2.0) != 0.0)) fl += 1.0;
  return fl;
}

}  // namespace detail

DGA_HOST_DEVICE double minifloat_decode(uint32_t code, const MiniFloat& f) {
  const uint32_t sign = (code >> (f.exp_bits + f.man_bits)) & 1u;
  const uint32_t e = (code >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const uint32_t m = code & ((1u << f.man_bits) - 1);
  const uint32_t e_max = (1u << f.exp_bits) - 1;
  double v;
  if (f.has_inf && e == e_max) {
    v = m == 0 ? INFINITY : NAN;
  } else if (f.nan_all_ones && e == e_max && m == (1u << f.man_bits) - 1) {
    v = NAN;
  } else if (e == 0) {
    v = std::ldexp(double(m), 1 - detail::bias(f) - f.man_bits);
  } else {
    v = std::ldexp(double(m | (1u << f.man_bits)), int(e) - detail::bias(f) - f.man_bits);
  }
  return sign ? -v : v;
}

DGA_HOST_DEVICE uint32_t minifloat_encode(float x, const MiniFloat& f) {
  const int width = f.exp_bits + f.man_bits;
  const uint32_t sign_bit = std::signbit(x) ? (1u << width) : 0u;
  const uint32_t all = (1u << width) - 1;
  if (std::isnan(x)) return f.has_nan ? (sign_bit | all) : 0u;
  const uint32_t inf_code = all - ((1u << f.man_bits) - 1);
  const double a = std::fabs(double(x));
  const uint32_t max_c = detail::max_code(f);
  if (std::isinf(x)) return sign_bit | (f.has_inf ? inf_code : max_c);
  if (a == 0.0) return sign_bit;
  const int emin = 1 - detail::bias(f);          // exponent of the smallest normal
  int e = std::ilogb(a);
  if (e < emin) e = emin;
  const double quantum = std::ldexp(1.0, e - f.man_bits);
  const double q = detail::round_half_even(a / quantum);  // integer in [0, 2^(man_bits+1)]
  const double v = q * quantum;
  if (v > minifloat_decode(max_c, f)) return sign_bit | (f.has_inf ? inf_code : max_c);
  if (q == 0.0) return sign_bit;
  // Re-derive exponent and mantissa from the rounded value (rounding may carry into the next binade).
  int ev = std::ilogb(v);
  if (ev < emin) return sign_bit | uint32_t(q);  // subnormal: mantissa is q
  const uint32_t biased = uint32_t(ev + detail::bias(f));
  const uint32_t man = uint32_t(std::ldexp(v, f.man_bits - ev)) - (1u << f.man_bits);
  return sign_bit | (biased << f.man_bits) | man;
}

// ---- named formats --------------------------------------------------------------------------
DGA_HOST_DEVICE uint16_t float_to_fp16(float x) { return uint16_t(minifloat_encode(x, kFP16Format)); }
DGA_HOST_DEVICE float fp16_to_float(uint16_t c) { return float(minifloat_decode(c, kFP16Format)); }
// E4M3FN by bit manipulation (the hot path of re-quantisation); equal to minifloat_encode(x, kE4M3Format).
DGA_HOST_DEVICE uint8_t float_to_e4m3(float x) {
  constexpr uint32_t kAbs = 0x7FFFFFFFu, kInf = 0x7F800000u;
  constexpr uint32_t kMaxBits = 0x43E00000u;       // 448.0f: it and everything above saturate
  constexpr uint32_t kMinNormalBits = 0x3C800000u;  // 2^-6
  constexpr uint8_t kNaN = 0x7F, kMax = 0x7E;
  constexpr float kSubnormalQuanta = 512.0f;        // 2^9 subnormal steps of 2^-9 per unit
  constexpr int kDrop = 23 - 3;                     // fp32 -> 3 mantissa bits
  constexpr uint32_t kRebias = uint32_t(127 - 7) << 3;
  const uint32_t u = float_bits(x), a = u & kAbs;
  const uint8_t sign = uint8_t((u >> 24) & 0x80u);
  if (a > kInf) return sign | kNaN;
  if (a >= kMaxBits) return sign | kMax;
  if (a < kMinNormalBits) return sign | uint8_t(std::nearbyint(bits_float(a) * kSubnormalQuanta));
  const uint32_t r = (a + ((1u << (kDrop - 1)) - 1) + ((a >> kDrop) & 1u)) >> kDrop;
  return sign | uint8_t(r - kRebias);
}
DGA_HOST_DEVICE float e4m3_to_float(uint8_t c) { return float(minifloat_decode(c, kE4M3Format)); }
DGA_HOST_DEVICE uint8_t float_to_e5m2(float x) { return uint8_t(minifloat_encode(x, kE5M2Format)); }
DGA_HOST_DEVICE float e5m2_to_float(uint8_t c) { return float(minifloat_decode(c, kE5M2Format)); }
// 4-bit code in the low nibble.
DGA_HOST_DEVICE uint8_t float_to_e2m1(float x) { return uint8_t(minifloat_encode(x, kE2M1Format)); }
DGA_HOST_DEVICE float e2m1_to_float(uint8_t c) { return float(minifloat_decode(c & 0xFu, kE2M1Format)); }

// ---- UE8M0 (exponent-only scale) ---------------------------------------------------------------
enum class Ue8m0Rounding { kNearestEven, kCeil, kFloor };

inline constexpr uint8_t kUe8m0NaN = 0xFF;
inline constexpr int kUe8m0Bias = 127;
inline constexpr int kUe8m0MaxCode = 254;

DGA_HOST_DEVICE float ue8m0_to_float(uint8_t c) {
  return c == kUe8m0NaN ? NAN : float(std::ldexp(1.0, int(c) - kUe8m0Bias));
}

DGA_HOST_DEVICE uint8_t float_to_ue8m0(float x, Ue8m0Rounding mode = Ue8m0Rounding::kNearestEven) {
  if (std::isnan(x) || x < 0.0f) return kUe8m0NaN;
  if (std::isinf(x)) return kUe8m0MaxCode;
  if (x == 0.0f) return 0;
  const double a = double(x);
  int e = std::ilogb(a);
  const double m = a / std::ldexp(1.0, e);  // [1, 2)
  int code = e + kUe8m0Bias;
  switch (mode) {
    case Ue8m0Rounding::kFloor: break;
    case Ue8m0Rounding::kCeil: code += m > 1.0; break;
    case Ue8m0Rounding::kNearestEven: code += m > 1.5 || (m == 1.5 && (code & 1)); break;
  }
  if (code < 0) return 0;
  return uint8_t(code > kUe8m0MaxCode ? kUe8m0MaxCode : code);
}

}  // namespace deepgemm_ascend::core
