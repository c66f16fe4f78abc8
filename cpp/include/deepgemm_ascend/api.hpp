// The public C++ API of deepgemm_ascend. Every entry point validates its arguments first and throws
// core::Error (naming the argument) before anything is written.
#pragma once

#include <string>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/core/tensor_view.hpp"

namespace deepgemm_ascend {

using core::TensorView;

// ---- dense BF16 GEMM: D = C + A @ B -------------------------------------------------------------
// layout "nt": A [M, K], B [N, K];  "nn": A [M, K], B [K, N];  "tn": A [K, M], B [K, N];
// "tt": A [K, M], B [N, K]. A and B are bfloat16 with any strides; D is bfloat16 or float32 with
// unit last stride; C (optional) matches D's dtype and shape and may be D itself.
void bf16_gemm(const std::string& layout, const TensorView& a, const TensorView& b, const TensorView& d,
               const TensorView* c = nullptr);
inline void bf16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("nt", a, b, d, c);
}
inline void bf16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("nn", a, b, d, c);
}
inline void bf16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("tn", a, b, d, c);
}
inline void bf16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("tt", a, b, d, c);
}

// ---- FP8 / FP4 dense GEMM with block scaling: D = C + (A * SFA) @ (B * SFB) --------------------
// A and B are float8_e4m3fn / float8_e5m2, or packed FP4 e2m1 (int8, uint8 or float4_e2m1fn_x2: the
// last stored dimension holds two values per byte and must be contiguous), stored as `layout` says
// (as for bf16_gemm). Scales are given in logical orientation, [rows, K blocks]:
//   float32 [ceil(MN / gran_mn), ceil(K / gran_k)], any strides; or UE8M0 packed along K, rows MN
//   (gran_mn 1): int16 pairs [MN, ceil(SK / 2)] (the Ascend layout) or int32 quads [MN, ceil(SK / 4)]
//   (upstream), SK = ceil(K / gran_k).
// gran_k is 32 or 128 per side. The product of every K block of min(gran_k) values is promoted into
// the fp32 accumulator with its row and column scales; D is rounded once.
struct ScaleRecipe {
  int64_t gran_mn = 1;
  int64_t gran_k = 128;
};
void fp8_fp4_gemm(const std::string& layout, const TensorView& a, const TensorView& sfa, const TensorView& b,
                  const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe recipe_a,
                  ScaleRecipe recipe_b);

// ---- fractal layouts ---------------------------------------------------------------------------
// src [R, C] or [G, R, C] of `value_bits` (16, 8, or 4 = packed pairs along the last dimension);
// Nz dst [.., ceil(C / C0), align(R, 16), C0] and Zn dst [.., ceil(R / C0), align(C, 16), C0], in
// storage units (bytes for 4-bit, C0 = 256 / value_bits values). Padding is zero. Errors name the
// ND/fractal input `t` and the output `out`, as the Python API does.
enum class Fractal { kNz, kZn };
void to_fractal(Fractal f, const TensorView& src, const TensorView& dst, int value_bits);
void from_fractal(Fractal f, const TensorView& src, const TensorView& dst, int value_bits);

// ---- runtime -----------------------------------------------------------------------------------
int get_num_ai_cores();
int get_max_ai_cores();  // cores of the device
void set_num_ai_cores(int n);  // 0 = all cores of the device
const char* version();

}  // namespace deepgemm_ascend
