// Vector-side epilogue of Mega MoE's first GEMM: SwiGLU with the routing weight and optional clamp,
// then re-quantisation for the second GEMM. For one row of h = x @ W1^T (bfloat16, 2I values):
//   gate, up = the two halves of the ORIGINAL W1 rows (interleaved by 8 after the Mega MoE weight
//              transform: columns [gate 0..7, up 0..7, gate 8..15, up 8..15, ...])
//   gate = min(gate, clamp);  up = min(max(up, -clamp), clamp)          (on the bf16 values)
//   act  = silu(gate) * up * weight                                      (fp32, silu(g) = g / (1 + e^-g))
//   FP8: per 32 columns sf = 2^ceil(log2(max(amax, 1e-4) / 448)) (UE8M0), out = e4m3(act / sf)
//   BF16: out = bf16(act)
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/macros.hpp"

namespace deepgemm_ascend::block {

struct SwigluParams {
  float clamp = INFINITY;   // activation_clamp; infinity = none
  bool fast_math = true;    // accepted for the NPU; the host always evaluates expf accurately
  bool fp8_out = true;      // FP8 + UE8M0 per 32, or BF16
  bool interleaved = true;  // gate/up interleaved by 8 (transformed weights) or [gate | up] halves
};

// Where the UE8M0 scale of column group j of one row goes: byte row + (j / 4) * k_stride + j % 4
// (int32 words of 4 scales; k_stride in bytes between words).
struct ScaleOut {
  uint8_t* row = nullptr;
  int64_t k_stride = 4;
};

// (gate, up) columns of output column j in a row of h.
std::pair<int64_t, int64_t> swiglu_columns(int64_t j, int64_t inter, bool interleaved);

// h: 2I bf16 codes; out: I FP8 (or bf16) codes.
void swiglu_row(const uint16_t* h, int64_t inter, float weight, const SwigluParams& p, void* out, ScaleOut sf);

inline constexpr int64_t kSwigluScaleGroup = arch::MxFormat::kMxBlockK;  // values per UE8M0 scale
inline constexpr int64_t kScalesPerWord = 4;     // UE8M0 scales per int32
inline constexpr int64_t kSwigluInterleave = 8;  // gate / up chunk of the transformed W1 rows
inline constexpr float kSwigluAmaxFloor = 1e-4f;  // quantisation of all-zero groups stays finite
inline constexpr float kE4M3Max = 448.0f;

// The UE8M0 code of a group whose largest |act| is amax: 2^ceil(log2(max(amax, floor) / 448)), at most
// 254 (an infinite amax); integer arithmetic on the fp32 bits (the quotient is a normal number), so that
// the host and the NPU's scalar unit compute it alike.
DGA_HOST_DEVICE uint8_t swiglu_scale_code(float amax) {
  constexpr uint32_t kMantissa = 0x7FFFFFu;
  constexpr int kMantissaBits = 23;
  const float v = (amax > kSwigluAmaxFloor ? amax : kSwigluAmaxFloor) / kE4M3Max;
  const uint32_t b = core::float_bits(v);
  const uint32_t code = (b >> kMantissaBits) + ((b & kMantissa) != 0 ? 1u : 0u);
  return uint8_t(code > uint32_t(core::kUe8m0MaxCode) ? uint32_t(core::kUe8m0MaxCode) : code);
}

// 1 / 2^(code - 127), exact (2^-127, for code 254, is subnormal).
DGA_HOST_DEVICE float swiglu_inverse_scale(uint8_t code) {
  constexpr int kMantissaBits = 23;
  constexpr uint32_t kTwoToMinus127 = 0x00400000u;
  const uint32_t e = 2u * uint32_t(core::kUe8m0Bias) - uint32_t(code);  // biased exponent of the inverse
  return e == 0 ? core::bits_float(kTwoToMinus127) : core::bits_float(e << kMantissaBits);
}

}  // namespace deepgemm_ascend::block
