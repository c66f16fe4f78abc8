// The NPU instruction model, the cube: Mmad as the devkit's CPU-debug headers issue it
// (impl/basic_api/dav_3510/kernel_operator_mm_impl.h: mad(c, a, b, m, k, n, unitFlag, disableGemv,
// cmatrixSource, cmatrixInitVal)), with the semantics of "Mmad" in the AscendC documentation (950: A in
// L0A as Nz M x K, B in L0B as Zn K x N, C in L0C as Nz M x N; the type table). Our reading of the
// documentation; the summation order inside the cube is not documented. The model multiplies in double
// (a product of two bf16 / fp16 / fp32 / fp8 / fp4 values, MX scales included, is exact in double), sums
// each output in double from its start value (0 with init, else C) in ascending K order, and rounds to fp32
// once per call. It decodes each operand once into row panels and runs a register-blocked kernel vectorised
// across outputs (npu_model/cube_dot.hpp), so only the speed depends on the host: with exact products a
// fused multiply-add rounds like a multiply and an add, and every host gives the same bits.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

// kE2M1: packed, low nibble first; kS8: int8_t (two's complement)
enum class CubeType : uint8_t { kBF16, kFP16, kFP32, kE4M3, kE5M2, kE2M1, kS8 };

int cube_type_bytes(CubeType t);  // bytes of one element (kE2M1: 1 byte = 2 values)
int cube_type_bits(CubeType t);   // bits of one value

// C (+)= A x B over the valid m x k and k x n (init: C = A x B). Layouts, with c0 = 32 B of K values of
// the operand's type and m16 = ceil(m / 16), n16 = ceil(n / 16):
//   A (Nz): fractal (m / 16, k / c0) at (k / c0 * m16 + m / 16) * 512 B, element at (m % 16) * c0 + k % c0
//   B (Zn of K x N, byte for byte the Nz of B^T [N, K]): fractal (n / 16, k / c0) at (k / c0 * n16 + n / 16)
//     * 512 B, element at (n % 16) * c0 + k % c0
//   C (Nz fp32): fractal (m / 16, n / 16) at (n / 16 * m16 + m / 16) * 1024 B, element at (m % 16) * 16 + n % 16
// GEMV ("GEMV" under Mmad's key features: m == 1 with disable_gemv false): A is the 1 x K vector, its K values
// contiguous from the L0A start (which the glue checks is 512 B aligned); C as above, row 0 of each fractal
// (for fp32 C each 1 x 16 piece takes a 1024 B fractal, its lowest 64 B valid).
// Refused (not modelled): a C matrix from the bias table, type pairs outside the documentation's table, GEMV
// in the MX Mmad (its scale layout for a vector A is not documented), fp32 operands in HF32 mode.
// hf32: CTRL[46] (SetHF32Mode, "Mmad计算 / 关键特性说明 / HF32" in the AscendC docs): the cube rounds fp32
// operands to HF32 (10 mantissa bits on the 950) before the product, by CTRL's HF32 rounding mode
// (SetHF32TransMode). The documentation names the rounding modes only in words ("NEAREST_ZERO" / "NEAREST_EVEN")
// and the format only in a figure, so the model refuses fp32 operands with it on; other types ignore it (the
// page applies it to fp32 data only).
struct Mad {
  uint16_t m = 0, k = 0, n = 0;
  bool disable_gemv = true;
  bool c_from_bias = false;
  bool init = false;
  bool hf32 = false;
};
void mad(float* c, const uint8_t* a, CubeType ta, const uint8_t* b, CubeType tb, const Mad& op,
         Accesses* acc = nullptr);

// The integer Mmad (Mmad.md, 数据类型, the 950's table: int8_t x int8_t -> int32_t): A, B and C laid out as
// for mad (c0 = 32 int8 values of K; C's Nz fractal holds 16 x 16 int32). C (+)= A x B in exact integer
// arithmetic: each product is at most 2^14 in magnitude and K at most 4095 (Mmad.md), so every partial sum,
// start value included, is an integer below 2^31 + 2^26 < 2^53 and the double kernel (cube_dot.hpp) sums it
// exactly. The documentation does not say what the cube does when a result leaves int32 (wrap or saturate):
// such a result is refused (kNotImplemented); a partial sum that leaves int32 and returns is not detected.
// HF32 mode applies to fp32 operands only (HF32.md) and is ignored here.
void mad_s8(int32_t* c, const uint8_t* a, const uint8_t* b, const Mad& op, Accesses* acc = nullptr);

// The MX Mmad ("MmadMx", asc_mmad_mx: C = (scaleA (x) A) (scaleB (x) B) + C, one UE8M0 scale per 32 K
// values): A, B and C as for mad (fp8 pairs or fp4 pairs; c0 = 32 B of K, 64 fp4 values), the scales of A
// in L0A_MX (zZ) and of B in L0B_MX (nN), 16 rows x 2 K-adjacent scales per 32 B unit: the scale of row r
// and K group g at unit (r / 16) * ceil(k / 64) + g / 2, byte (r % 16) * 2 + g % 2; value 2^(byte - 127).
void mad_mx(float* c, const uint8_t* a, CubeType ta, const uint8_t* sa, const uint8_t* b, CubeType tb,
            const uint8_t* sb, const Mad& op, Accesses* acc = nullptr);

// The value of value i of a buffer of type t (fp8, fp4 and bf16 decoded exactly).
double cube_value(const uint8_t* p, CubeType t, int64_t i);

}  // namespace deepgemm_ascend::npu_model
