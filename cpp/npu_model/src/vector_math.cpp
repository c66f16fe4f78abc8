// The vector core's micro-ops of the SwiGLU stage (vector.hpp): vexp, vabs, vdiv, vmaxs / vmins, vcmax
// (float), the block-stride load vsldb and the f32 -> fp8 e4m3 conversion; the FP4 widening's fp4x2 e2m1 ->
// bf16 conversion and vor.
#include <cmath>
#include <cstring>
#include <limits>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_elementwise.hpp"

namespace deepgemm_ascend::npu_model {

namespace {

constexpr size_t kBlocks = kVregBytes / kUbBlockBytes;
constexpr uint32_t kSignBit = 0x80000000u;
constexpr float kE4M3Overflow = 464.0f;  // the midpoint to 512: from here RINT rounds past the largest value
constexpr uint8_t kE4M3NaN = 0x7F, kE4M3Sign = 0x80;

// max / min with a NaN operand giving NaN.
float nan_max(float x, float y) { return std::isnan(x) || std::isnan(y) ? std::numeric_limits<float>::quiet_NaN() : x > y ? x : y; }
float nan_min(float x, float y) { return std::isnan(x) || std::isnan(y) ? std::numeric_limits<float>::quiet_NaN() : x < y ? x : y; }

// keep_nan: CTRL[50], read only when saturating.
uint8_t to_e4m3(float x, bool saturate, bool keep_nan) {
  if (saturate && std::isnan(x) && !keep_nan) return 0;
  if (saturate || std::isnan(x) || std::fabs(x) < kE4M3Overflow) return core::float_to_e4m3(x);
  return uint8_t((std::signbit(x) ? kE4M3Sign : 0) | kE4M3NaN);
}

void zeroing_only(Merge merge, const char* what) {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", what, " is modelled with ZEROING only");
}

// e2m1 (sign, 2 exponent bits with bias 1, 1 mantissa bit) -> bf16 bits, exact.
uint16_t e2m1_to_bf16(uint8_t nibble) {
  constexpr uint8_t kSign = 0x8, kExpShift = 1, kMantissa = 0x1, kExpMask = 0x3;
  const int e = (nibble >> kExpShift) & kExpMask, m = nibble & kMantissa;
  const float mag = e == 0 ? 0.5f * float(m) : std::ldexp(1.0f + 0.5f * float(m), e - 1);
  return core::float_to_bf16((nibble & kSign) ? -mag : mag);
}

}  // namespace

void VectorCore::vexp(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const {
  unary_f32(dst, src, mask, merge, "Exp", [](float x) { return std::exp(x); });
}

void VectorCore::vabs(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const {
  unary_f32(dst, src, mask, merge, "Abs", [](float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    b &= ~kSignBit;
    std::memcpy(&x, &b, sizeof b);
    return x;
  });
}

void VectorCore::vdiv(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const {
  zeroing_only(merge, "Div");
  binary(dst, a, b, mask, merge, [](float x, float y) { return x / y; });
}

void VectorCore::vmaxs(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const {
  unary_f32(dst, src, mask, merge, "Maxs", [scalar](float x) { return nan_max(x, scalar); });
}

void VectorCore::vmins(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const {
  unary_f32(dst, src, mask, merge, "Mins", [scalar](float x) { return nan_min(x, scalar); });
}

void VectorCore::vcmax(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const {
  zeroing_only(merge, "ReduceMax");
  bool any = false;
  float m = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < kB32Elements; ++i)
    if (active(mask, i, Width::kB32)) m = nan_max(m, src.get<float>(i)), any = true;
  DGA_REQUIRE(any, kNotImplemented, "mask", "ReduceMax with no active element is not modelled");
  Vreg out;
  out.set<float>(0, m);
  dst = out;
}

void VectorCore::vsldb(Vreg& dst, const uint8_t* src, uint32_t block_stride, uint16_t mask, Width w,
                       Accesses* acc) const {
  const size_t per_block = kUbBlockBytes / size_t(w);
  Vreg out;
  for (size_t k = 0; k < kBlocks; ++k) {
    bool on = false;
    for (size_t e = 0; e < per_block; ++e) on = on || active(mask, k * per_block + e, w);
    if (!on) continue;
    const uint8_t* from = src + k * size_t(block_stride) * kUbBlockBytes;
    std::memcpy(out.bytes.data() + k * kUbBlockBytes, from, kUbBlockBytes);
    note(acc, from, kUbBlockBytes, false);
  }
  dst = out;
}

void VectorCore::vcvt_f322e4m3(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Sat sat, Part4 part,
                               Merge merge) const {
  DGA_REQUIRE(round == Round::kRint, kNotImplemented, "round", "only CAST_RINT is modelled for f32 -> e4m3");
  zeroing_only(merge, "f32 -> e4m3");
  const bool saturate = saturating(sat), keep_nan = saturated_nan_kept();
  Vreg out;
  for (size_t i = 0; i < kB32Elements; ++i)
    if (active(mask, i, Width::kB32))
      out.set<uint8_t>(4 * i + size_t(part), to_e4m3(src.get<float>(i), saturate, keep_nan));
  dst = out;
}

void VectorCore::vcvt_e2m12bf16(Vreg& dst, const Vreg& src, uint16_t mask, Part4 part, Merge merge) const {
  zeroing_only(merge, "fp4x2 e2m1 -> bf16");
  constexpr size_t kLowNibble = 0xF, kNibbleBits = 4;
  const Pred& p = pred(mask);
  Vreg out;
  for (size_t j = 0; j < kB32Elements; ++j) {
    const size_t byte = 4 * j + size_t(part);
    if (!p.test(byte)) continue;
    const uint8_t pair = src.get<uint8_t>(byte);
    out.set<uint16_t>(2 * j, e2m1_to_bf16(uint8_t(pair & kLowNibble)));
    out.set<uint16_t>(2 * j + 1, e2m1_to_bf16(uint8_t(pair >> kNibbleBits)));
  }
  dst = out;
}

void VectorCore::vor(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Width w, Merge merge) const {
  zeroing_only(merge, "Or");
  const size_t width = size_t(w);
  Vreg out;
  for (size_t i = 0; i < kVregBytes / width; ++i) {
    if (!active(mask, i, w)) continue;
    for (size_t k = 0; k < width; ++k)
      out.set<uint8_t>(i * width + k, uint8_t(a.get<uint8_t>(i * width + k) | b.get<uint8_t>(i * width + k)));
  }
  dst = out;
}

}  // namespace deepgemm_ascend::npu_model
