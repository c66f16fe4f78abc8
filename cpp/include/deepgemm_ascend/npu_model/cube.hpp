// The NPU instruction model (issue 16), the cube: Mmad as the devkit's CPU-debug headers issue it
// (impl/basic_api/dav_3510/kernel_operator_mm_impl.h: mad(c, a, b, m, k, n, unitFlag, disableGemv,
// cmatrixSource, cmatrixInitVal)), with the semantics of "Mmad" in the AscendC documentation (950: A in
// L0A as Nz M x K, B in L0B as Zn K x N, C in L0C as Nz M x N; the type table). Our reading of the
// documentation; the summation order inside the cube is not documented (the model sums in double and
// rounds once per call).
#pragma once

#include <cstdint>

namespace deepgemm_ascend::npu_model {

enum class CubeType : uint8_t { kBF16, kFP16, kFP32, kE4M3, kE5M2 };

int cube_type_bytes(CubeType t);

// C (+)= A x B over the valid m x k and k x n (init: C = A x B). Layouts, with c0 = 32 B of K values of
// the operand's type and m16 = ceil(m / 16), n16 = ceil(n / 16):
//   A (Nz): fractal (m / 16, k / c0) at (k / c0 * m16 + m / 16) * 512 B, element at (m % 16) * c0 + k % c0
//   B (Zn of K x N, byte for byte the Nz of B^T [N, K]): fractal (n / 16, k / c0) at (k / c0 * n16 + n / 16)
//     * 512 B, element at (n % 16) * c0 + k % c0
//   C (Nz fp32): fractal (m / 16, n / 16) at (n / 16 * m16 + m / 16) * 1024 B, element at (m % 16) * 16 + n % 16
// Refused (not modelled): m == 1 with GEMV on (A would be read as ND), a C matrix from the bias table,
// type pairs outside the documentation's table.
struct Mad {
  uint16_t m = 0, k = 0, n = 0;
  bool disable_gemv = true;
  bool c_from_bias = false;
  bool init = false;
};
void mad(float* c, const uint8_t* a, CubeType ta, const uint8_t* b, CubeType tb, const Mad& op);

// The value of element i of a buffer of type t (fp8 and bf16 decoded exactly).
double cube_value(const uint8_t* p, CubeType t, int64_t i);

}  // namespace deepgemm_ascend::npu_model
