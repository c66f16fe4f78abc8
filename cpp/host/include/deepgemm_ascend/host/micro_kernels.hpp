// Host cube micro-kernels, one per ISA, chosen at run time (runtime/cpu_features).
//
//   unscaled: c (=|+=) a * b
//   scaled:   c (=|+=) (a * b) x row_scale[m] x col_scale[n]   (promotion of one K block, in fp32)
//
// c: L0C Nz fp32 [m_pad x n_pad]; a: L0A bf16 [m_pad x k_pad] in the kernel's K grouping (below);
// b: L0B bf16 [k_pad x n_pad]: per 16 columns, a panel of k_pad / 2 K-pair rows (tile/cube_format.hpp),
// b_panel values from one panel to the next (k_pad x 16 in L0B itself; more where b is read from L1's K-pair
// panels, host/pair_panels.hpp).
#pragma once

#include <cstdint>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/operand.hpp"

namespace deepgemm_ascend::tile::host {

struct MmadArgs {
  float* c;
  const uint16_t* a;
  const uint16_t* b;
  int64_t m_pad, n_pad, k_pad;
  bool init;                           // true: c is overwritten instead of accumulated into
  const float* row_scale = nullptr;    // m_pad values; both null for an unscaled product
  const float* col_scale = nullptr;    // n_pad values
  int64_t b_panel = 0;                 // values between b's 16-column panels; 0: k_pad x 16

  int64_t b_panel_stride() const { return b_panel != 0 ? b_panel : k_pad * kCubeBlock; }
};

using MmadBf16Fn = void (*)(const MmadArgs&);

void mmad_bf16_scalar(const MmadArgs& args);
void mmad_bf16_avx2(const MmadArgs& args);
void mmad_bf16_avx512(const MmadArgs& args);
void mmad_bf16_avx512bf16(const MmadArgs& args);
void mmad_bf16_amx(const MmadArgs& args);

// The micro-kernel of the active host ISA.
MmadBf16Fn mmad_bf16();

// L0A's K grouping: how many K values of a row lie side by side. 16 is Nz (the NPU's order: fractal
// column kb holds rows 0 .. m_pad - 1 x K [16 kb, 16 kb + 16)), which the AVX and scalar kernels read;
// AMX reads 32 (one tile row): fractal columns 2s and 2s + 1 side by side, row r of K step s at
// (s * m_pad + r) * 32, and an odd last fractal column after them as in Nz. load_l1_to_l0a writes it.
inline constexpr int kNzKGroup = 16, kK32Group = 32;
int l0a_k_group();  // the active micro-kernel's

// Where fractal column kb of an L0A of m_pad rows and k_pad K values lies in grouping `group`: the
// offset of its row 0 and the distance between rows, in values.
struct L0AFractal {
  int64_t offset, row_stride;
};
inline L0AFractal l0a_fractal(int64_t kb, int64_t m_pad, int64_t k_pad, int group) {
  constexpr int64_t kFrac = kNzKGroup;
  const bool odd_last = group == kK32Group && (k_pad / kFrac) % 2 == 1 && kb == k_pad / kFrac - 1;
  if (group == kNzKGroup || odd_last) return {kb * m_pad * kFrac, kFrac};
  return {(kb / 2) * m_pad * kK32Group + (kb % 2) * kFrac, kK32Group};
}

// Calibration loops: `iters` rounds of each micro-kernel's multiply instruction on registers only (no
// memory traffic, enough independent chains to hide its latency); return the FLOP done.
using PeakLoopFn = double (*)(int64_t iters);
double peak_loop_scalar(int64_t iters);
double peak_loop_avx2(int64_t iters);
double peak_loop_avx512(int64_t iters);
double peak_loop_avx512bf16(int64_t iters);
double peak_loop_amx(int64_t iters);
PeakLoopFn peak_loop_fn();  // the active host ISA's

// Exact 8-bit / packed 4-bit -> bf16 widening (host/widen.hpp), per ISA.
using WidenRowsFn = void (*)(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                             int64_t out_stride);
void widen_rows_scalar(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                       int64_t out_stride);
void widen_rows_avx2(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                     int64_t out_stride);
void widen_rows_avx512(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                       int64_t out_stride);
void widen_rows_avx512vbmi(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                           int64_t out_stride);  // where the AVX-512 helpers run and the CPU has AVX512-VBMI
WidenRowsFn widen_rows_fn();

// Widening of 8-bit codes with power-of-two scales folded in (host/scale_fold.hpp): each widened value gets an
// exponent step added (zero, NaN and Inf kept). step_per_row: row r's 16 values take step[r]; else value j of row
// r takes step[(r % 2) * 16 + j] (L0B's K pairs: 16 columns x 2 values per two rows). Null where the active ISA
// has none (the caller then widens and folds in two passes).
using WidenFoldFn = void (*)(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                             int64_t out_stride, const uint16_t* step, bool step_per_row);
void widen_fold_avx512(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                       int64_t out_stride, const uint16_t* step, bool step_per_row);
void widen_fold_avx512vbmi(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                           int64_t out_stride, const uint16_t* step, bool step_per_row);
void widen_fold_avx2(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                     int64_t out_stride, const uint16_t* step, bool step_per_row);
WidenFoldFn widen_fold_fn();

// Every code's bf16 as the scalar reference widens it, made once per format: entry c is code c (an
// 8-bit code, or a 4-bit code in entries 0 .. 15; the sign is the top bit, so the magnitudes come
// first). The ISA kernels build their lookups from it, so they agree with the reference bit for bit.
inline constexpr int kWidenCodes = 256;
const uint16_t* widened_codes(OperandFormat fmt);

// The K-pair interleave of 16 x 16 bf16 values (16 rows of N, 16 K values each, rows `stride` values apart)
// into L0B's order, used by the GM -> L1 copy of B (host/pair_panels.hpp): pair word p (K values 2p,
// 2p + 1) of row n goes to out[p * 16 + n].
using InterleaveFn = void (*)(const uint16_t* f, int64_t stride, uint32_t* out);
void interleave_k_pairs_scalar(const uint16_t* f, int64_t stride, uint32_t* out);
void interleave_k_pairs_avx2(const uint16_t* f, int64_t stride, uint32_t* out);
void interleave_k_pairs_avx512(const uint16_t* f, int64_t stride, uint32_t* out);
InterleaveFn interleave_k_pairs_fn();

// The SwiGLU core of Mega MoE's vector stage over columns [j0, j0 + n) of one row of h (n a multiple of
// 16): act[j - j0] = silu(min(gate, clamp)) * min(max(up, -clamp), clamp) * weight, in fp32.
struct SiluMulArgs {
  const uint16_t* h;  // 2 * inter bf16 codes: [gate | up], or interleaved by 8
  int64_t inter, j0, n;
  bool interleaved;
  float clamp, weight;
  float* act;
};
void silu_mul_scalar(const SiluMulArgs& args);
void silu_mul_avx512(const SiluMulArgs& args);

// The FP8 re-quantisation of one SwiGLU scale group (block/swiglu.hpp): the largest |v[j]| of n values (NaN
// values do not count; 0 for none), and out[j] = core::float_to_e4m3(v[j] * scale), bit for bit, for j < n
// (nothing written beyond).
float group_amax_scalar(const float* v, int64_t n);
float group_amax_avx512(const float* v, int64_t n);
void encode_e4m3_scalar(const float* v, int64_t n, float scale, uint8_t* out);
void encode_e4m3_avx512(const float* v, int64_t n, float scale, uint8_t* out);

// The SwiGLU stage's kernels of the active host ISA, chosen together.
struct SwigluKernels {
  void (*silu_mul)(const SiluMulArgs&);
  float (*group_amax)(const float* v, int64_t n);
  void (*encode_e4m3)(const float* v, int64_t n, float scale, uint8_t* out);
};
SwigluKernels swiglu_kernels();

}  // namespace deepgemm_ascend::tile::host
