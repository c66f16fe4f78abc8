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
