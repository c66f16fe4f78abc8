#include "deepgemm_ascend/host/widen.hpp"

#include <cstring>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

// Each format decodes with float arithmetic that stays away from fp32 subnormals (so a DAZ/FTZ
// floating-point mode cannot change it): normal codes shift their exponent and mantissa into fp32
// position and rebias by one multiplication; subnormal codes convert their mantissa integer and
// scale it. The bf16 result is the top half of the fp32 bits (all mantissas fit in 7 bits).
template <core::MiniFloat kFormat>
struct MiniFormat {
  static constexpr int kExpBits = kFormat.exp_bits, kManBits = kFormat.man_bits;
  static constexpr bool kIeeeSpecials = kFormat.has_inf, kNanAllOnes = kFormat.nan_all_ones;
  static constexpr uint32_t kMagMask = (1u << (kExpBits + kManBits)) - 1;
  static constexpr uint32_t kManMask = (1u << kManBits) - 1;
  static constexpr int kBias = core::detail::bias(kFormat);
  static constexpr uint32_t kExpMax = (1u << kExpBits) - 1;
  static constexpr uint32_t kFp32Nan = 0x7FC00000u, kFp32Inf = 0x7F800000u;

  static uint16_t widen(uint32_t code) {
    const uint32_t mag = code & kMagMask, e = mag >> kManBits, m = mag & kManMask;
    uint32_t normal_bits = mag << (23 - kManBits);
    float normal;
    std::memcpy(&normal, &normal_bits, 4);
    normal *= rebias();
    const float sub = float(m) * subnormal_unit();
    const float f = e ? normal : sub;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (kIeeeSpecials && e == kExpMax) bits = m ? kFp32Nan : kFp32Inf;
    if (kNanAllOnes && mag == kMagMask) bits = kFp32Nan;
    bits |= (code >> (kExpBits + kManBits) & 1u) << 31;
    return uint16_t(bits >> 16);
  }
  static constexpr float rebias() { return pow2(127 - kBias); }
  static constexpr float subnormal_unit() { return 1.0f / pow2(kBias - 1 + kManBits); }
  static constexpr float pow2(int n) { return n <= 0 ? 1.0f : 2.0f * pow2(n - 1); }
};

using E4M3 = MiniFormat<core::kE4M3Format>;
using E5M2 = MiniFormat<core::kE5M2Format>;
using E2M1 = MiniFormat<core::kE2M1Format>;

template <class F>
inline void widen_bytes(const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out, int64_t out_stride) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < kWidenRun; ++i) out[r * out_stride + i] = F::widen(in[r * in_stride + i]);
}

void widen_e4m3(const uint8_t* in, int64_t s, int64_t rows, uint16_t* out, int64_t os) {
  widen_bytes<E4M3>(in, s, rows, out, os);
}
void widen_e5m2(const uint8_t* in, int64_t s, int64_t rows, uint16_t* out, int64_t os) {
  widen_bytes<E5M2>(in, s, rows, out, os);
}
void widen_e2m1(const uint8_t* in, int64_t s, int64_t rows, uint16_t* out, int64_t os) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < kWidenRun / 2; ++i) {
      const uint8_t byte = in[r * s + i];
      out[r * os + 2 * i] = E2M1::widen(byte & 0xFu);
      out[r * os + 2 * i + 1] = E2M1::widen(byte >> 4);
    }
}

}  // namespace


void widen_rows_scalar(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                       int64_t out_stride) {
  switch (fmt) {
    case OperandFormat::kE4M3: return widen_e4m3(in, in_stride, rows, out, out_stride);
    case OperandFormat::kE5M2: return widen_e5m2(in, in_stride, rows, out, out_stride);
    case OperandFormat::kE2M1: return widen_e2m1(in, in_stride, rows, out, out_stride);
    case OperandFormat::kBF16: break;
  }
}

namespace {

struct CodeTable {
  uint16_t bf16[kWidenCodes] = {};
};

CodeTable make_code_table(OperandFormat fmt) {
  CodeTable t;
  if (fmt == OperandFormat::kE2M1) {
    uint8_t codes[kWidenRun / 2];  // codes 0 .. 15, two per byte, low nibble first
    for (int i = 0; i < kWidenRun / 2; ++i) codes[i] = uint8_t(2 * i | (2 * i + 1) << 4);
    widen_e2m1(codes, 0, 1, t.bf16, 0);
  } else {
    uint8_t codes[kWidenCodes];
    for (int c = 0; c < kWidenCodes; ++c) codes[c] = uint8_t(c);
    widen_rows_scalar(fmt, codes, kWidenRun, kWidenCodes / kWidenRun, t.bf16, kWidenRun);
  }
  return t;
}

}  // namespace

const uint16_t* widened_codes(OperandFormat fmt) {
  static const CodeTable e4m3 = make_code_table(OperandFormat::kE4M3),
                         e5m2 = make_code_table(OperandFormat::kE5M2),
                         e2m1 = make_code_table(OperandFormat::kE2M1);
  return (fmt == OperandFormat::kE4M3 ? e4m3 : fmt == OperandFormat::kE5M2 ? e5m2 : e2m1).bf16;
}


void widen_rows(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                int64_t out_stride) {
  widen_rows_fn()(fmt, in, in_stride, rows, out, out_stride);
}

}  // namespace deepgemm_ascend::tile::host
