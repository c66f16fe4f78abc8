#include "deepgemm_ascend/npu_model/cube.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/cube_checks.hpp"
#include "deepgemm_ascend/npu_model/data_move.hpp"
#include "deepgemm_ascend/npu_model/load2d.hpp"
#include "cube_dot.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
// The fractal and MX scale unit sizes of data_move.hpp / load2d.hpp, signed for the index arithmetic below.
constexpr int64_t kCubeRows = 16, kCubeC0Bytes = int64_t(kC0Bytes), kCubeFractalBytes = int64_t(kFractalBytes),
                  kCFractalFloats = 256;

bool fp8(CubeType t) { return t == CubeType::kE4M3 || t == CubeType::kE5M2; }

constexpr int kMxBlockK = 32, kMxScalesPerUnit = 2, kCubeMxUnitBytes = int(kMxUnitBytes), kUe8m0Bias = 127;

// Decodes n values of type t starting at value `first` of p into out[0], out[stride], ... (the fp8 and fp4
// codes through tables built once from core/convert.hpp's exact decoders).
void decode_run(const uint8_t* p, CubeType t, int64_t first, int64_t n, double* out, int64_t stride) {
  static const auto fp8_table = [](float (*decode)(uint8_t)) {
    std::array<double, 256> v{};
    for (int c = 0; c < 256; ++c) v[size_t(c)] = decode(uint8_t(c));
    return v;
  };
  static const std::array<double, 256> e4m3 = fp8_table(core::e4m3_to_float), e5m2 = fp8_table(core::e5m2_to_float),
                                       e2m1 = fp8_table(core::e2m1_to_float);
  switch (t) {
    case CubeType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * (first + i), 2);
        out[i * stride] = core::bf16_to_float(h);
      }
      return;
    case CubeType::kFP32:
      for (int64_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, p + 4 * (first + i), 4);
        out[i * stride] = f;
      }
      return;
    case CubeType::kE4M3: for (int64_t i = 0; i < n; ++i) out[i * stride] = e4m3[p[first + i]]; return;
    case CubeType::kE5M2: for (int64_t i = 0; i < n; ++i) out[i * stride] = e5m2[p[first + i]]; return;
    case CubeType::kE2M1:
      for (int64_t i = 0; i < n; ++i) out[i * stride] = e2m1[(p[(first + i) / 2] >> (4 * ((first + i) % 2))) & 0xF];
      return;
    case CubeType::kS8: for (int64_t i = 0; i < n; ++i) out[i * stride] = int8_t(p[first + i]); return;
    default: for (int64_t i = 0; i < n; ++i) out[i * stride] = cube_value(p, t, first + i); return;
  }
}

// The values of a Nz (A) / Zn (B) L0 tile of rows x k (c0 values of K per 32 B row), packed in panels of
// `panel` rows (cube_dot.hpp): value (r, x) at ((r / panel) * k + x) * panel + r % panel; the rows past
// `rows` up to a whole panel are zero.
void pack_l0(std::vector<double>& v, const uint8_t* p, CubeType t, int64_t rows, int64_t k, int64_t panel) {
  const int64_t r16 = (rows + kCubeRows - 1) / kCubeRows, c0 = kCubeC0Bytes * 8 / cube_type_bits(t);
  const int64_t per_fractal = kCubeFractalBytes * 8 / cube_type_bits(t), panels = (rows + panel - 1) / panel;
  v.assign(size_t(panels * panel * k), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x0 = 0; x0 < k; x0 += c0)
      decode_run(p, t, (x0 / c0 * r16 + r / kCubeRows) * per_fractal + (r % kCubeRows) * c0, std::min(c0, k - x0),
                 v.data() + ((r / panel) * k + x0) * panel + r % panel, panel);
}

// A as GEMV reads it (GEMV.md): the 1 x K vector, K values contiguous, packed as pack_l0 packs one row.
void pack_vector(std::vector<double>& v, const uint8_t* p, CubeType t, int64_t k, int64_t panel) {
  v.assign(size_t(panel * k), 0.0);
  decode_run(p, t, 0, k, v.data(), panel);
}

bool gemv(const Mad& op) { return op.m == 1 && !op.disable_gemv; }

// The products of the Mmad, packed for cube_dot; A and B (and their MX scales) already in the panels.
struct Operands {
  std::vector<double> a, b, out;
};
Operands& scratch() {
  thread_local Operands s;
  return s;
}

// The L0C element types: fp32, and int32 for the integer Mmad.
struct F32C {
  using T = float;
  static double load(float v) { return double(v); }
  static float store(double v) { return float(v); }  // the one rounding per call
};
struct S32C {
  using T = int32_t;
  static double load(int32_t v) { return double(v); }
  static int32_t store(double v) {  // exact (mad_s8 in cube.hpp); outside int32 the behaviour is not documented
    DGA_REQUIRE(v >= double(INT32_MIN) && v <= double(INT32_MAX), kNotImplemented, "c",
                "an int32 Mmad result outside int32 (", v, ") is not documented (wrap or saturation)");
    return int32_t(v);
  }
};

// C (Nz, m x n, of E::T) = start + sum over K of the packed products, start 0 with init, else the C
// element; summed in double along K and stored once (E::store).
template <class E>
void accumulate(typename E::T* c, const Mad& op, Operands& o) {
  const int64_t m16 = (op.m + kCubeRows - 1) / kCubeRows;
  const int64_t m_panels = (op.m + kDotRows - 1) / kDotRows, n_panels = (op.n + kDotCols - 1) / kDotCols;
  const int64_t stride = n_panels * kDotCols;
  // Row i of C, columns j0 .. j0 + 15: 16 consecutive elements of one Nz fractal.
  const auto c_row = [&](int64_t i, int64_t j0) {
    return c + (j0 / kCubeRows * m16 + i / kCubeRows) * kCFractalFloats + (i % kCubeRows) * kCubeRows;
  };
  o.out.assign(size_t(m_panels * kDotRows * stride), 0.0);
  if (!op.init)
    for (int64_t i = 0; i < op.m; ++i)
      for (int64_t j0 = 0; j0 < op.n; j0 += kCubeRows) {
        const typename E::T* from = c_row(i, j0);
        double* to = o.out.data() + i * stride + j0;
        for (int64_t j = 0; j < std::min(kCubeRows, op.n - j0); ++j) to[j] = E::load(from[j]);
      }
  cube_dot({.a = o.a.data(), .b = o.b.data(), .out = o.out.data(), .m_panels = m_panels, .n_panels = n_panels,
            .k = op.k});
  for (int64_t i = 0; i < op.m; ++i)
    for (int64_t j0 = 0; j0 < op.n; j0 += kCubeRows) {
      typename E::T* to = c_row(i, j0);
      const double* from = o.out.data() + i * stride + j0;
      for (int64_t j = 0; j < std::min(kCubeRows, op.n - j0); ++j) to[j] = E::store(from[j]);
    }
}

// The L0 bytes of a Mmad: A and B tiles (whole fractals), C (read unless init, written).
void note_operands(Accesses* acc, const void* c, const uint8_t* a, CubeType ta, const uint8_t* b, CubeType tb,
                   const Mad& op) {
  const auto tile = [&](int64_t rows, CubeType t) {
    const int64_t c0 = kCubeC0Bytes * 8 / cube_type_bits(t);
    return size_t((rows + kCubeRows - 1) / kCubeRows * ((op.k + c0 - 1) / c0) * kCubeFractalBytes);
  };
  note(acc, a, gemv(op) ? size_t((op.k * cube_type_bits(ta) + 7) / 8) : tile(op.m, ta), false);
  note(acc, b, tile(op.n, tb), false);
  const int64_t m16 = (op.m + kCubeRows - 1) / kCubeRows, n16 = (op.n + kCubeRows - 1) / kCubeRows;
  const size_t c_bytes = size_t(m16 * n16 * kCFractalFloats) * sizeof(float);
  if (!op.init) note(acc, c, c_bytes, false);
  note(acc, c, c_bytes, true);
}

double ue8m0(uint8_t e) { return e == 0xFF ? NAN : std::ldexp(1.0, int(e) - kUe8m0Bias); }

// The scale of row r and K group g in an L0 MX scale buffer for k values of K.
double mx_scale(const uint8_t* s, int64_t r, int64_t g, int64_t k) {
  const int64_t units_per_block = (k + kMxBlockK * kMxScalesPerUnit - 1) / (kMxBlockK * kMxScalesPerUnit);
  const int64_t unit = (r / kCubeRows) * units_per_block + g / kMxScalesPerUnit;
  return ue8m0(s[unit * kCubeMxUnitBytes + (r % kCubeRows) * kMxScalesPerUnit + g % kMxScalesPerUnit]);
}

// Multiplies the packed values (pack_l0) of rows x k by their rows' MX scales, one per 32 K values: a power
// of two (exact in double for fp8 and fp4 values) or NaN for the code 0xFF.
void apply_mx_scales(std::vector<double>& v, const uint8_t* s, int64_t rows, int64_t k, int64_t panel) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < k / kMxBlockK; ++g) {
      const double scale = mx_scale(s, r, g, k);
      double* at = v.data() + ((r / panel) * k + g * kMxBlockK) * panel + r % panel;
      for (int64_t x = 0; x < kMxBlockK; ++x) at[x * panel] *= scale;
    }
}
}  // namespace

int cube_type_bits(CubeType t) { return t == CubeType::kE2M1 ? 4 : 8 * cube_type_bytes(t); }

int cube_type_bytes(CubeType t) {
  switch (t) {
    case CubeType::kFP32: return 4;
    case CubeType::kBF16: case CubeType::kFP16: return 2;
    default: return 1;
  }
}

double cube_value(const uint8_t* p, CubeType t, int64_t i) {
  switch (t) {
    case CubeType::kBF16: { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return core::bf16_to_float(h); }
    case CubeType::kFP16: { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return core::fp16_to_float(h); }
    case CubeType::kFP32: { float f; std::memcpy(&f, p + 4 * i, 4); return f; }
    case CubeType::kE4M3: return core::e4m3_to_float(p[i]);
    case CubeType::kE5M2: return core::e5m2_to_float(p[i]);
    case CubeType::kE2M1: return core::e2m1_to_float(uint8_t((p[i / 2] >> (4 * (i % 2))) & 0xF));
    case CubeType::kS8: return int8_t(p[i]);
  }
  return 0.0;
}

void mad(float* c, const uint8_t* a, CubeType ta, const uint8_t* b, CubeType tb, const Mad& op, Accesses* acc) {
  check_mad_operands(c, a, b, op, acc);
  DGA_REQUIRE(ta == tb || (fp8(ta) && fp8(tb)), kValue, "b", "the cube takes equal operand types or two fp8 types");
  DGA_REQUIRE(ta != CubeType::kS8, kValue, "a", "int8 operands give an int32 C (mad_s8)");
  DGA_REQUIRE(!op.c_from_bias, kNotImplemented, "c_from_bias", "C from the bias table is not modelled");
  DGA_REQUIRE(ta != CubeType::kE2M1 && tb != CubeType::kE2M1, kValue, "a", "fp4 operands need the MX Mmad");
  DGA_REQUIRE(!(op.hf32 && ta == CubeType::kFP32), kNotImplemented, "hf32",
              "HF32 mode (CTRL[46], SetHF32Mode) with fp32 operands is not modelled (its rounding to HF32)");
  note_operands(acc, c, a, ta, b, tb, op);
  Operands& o = scratch();
  if (gemv(op)) pack_vector(o.a, a, ta, op.k, kDotRows);
  else pack_l0(o.a, a, ta, op.m, op.k, kDotRows);
  pack_l0(o.b, b, tb, op.n, op.k, kDotCols);
  accumulate<F32C>(c, op, o);
}

void mad_s8(int32_t* c, const uint8_t* a, const uint8_t* b, const Mad& op, Accesses* acc) {
  check_mad_operands(c, a, b, op, acc);
  DGA_REQUIRE(!op.c_from_bias, kNotImplemented, "c_from_bias", "C from the bias table is not modelled");
  note_operands(acc, c, a, CubeType::kS8, b, CubeType::kS8, op);
  Operands& o = scratch();
  if (gemv(op)) pack_vector(o.a, a, CubeType::kS8, op.k, kDotRows);
  else pack_l0(o.a, a, CubeType::kS8, op.m, op.k, kDotRows);
  pack_l0(o.b, b, CubeType::kS8, op.n, op.k, kDotCols);
  accumulate<S32C>(c, op, o);
}

void mad_mx(float* c, const uint8_t* a, CubeType ta, const uint8_t* sa, const uint8_t* b, CubeType tb,
            const uint8_t* sb, const Mad& op, Accesses* acc) {
  const bool fp4 = ta == CubeType::kE2M1 && tb == CubeType::kE2M1;
  DGA_REQUIRE(fp4 || (fp8(ta) && fp8(tb)), kValue, "b", "the MX cube takes two fp8 or two fp4 operands");
  check_mad_mx_operands(c, a, b, fp4, op, acc);
  DGA_REQUIRE(op.k % (kMxBlockK * kMxScalesPerUnit) == 0, kValue, "k", "the MX Mmad needs K a multiple of 64, got ",
              op.k);
  DGA_REQUIRE(!gemv(op), kNotImplemented, "disable_gemv", "GEMV (m == 1) in the MX Mmad is not modelled");
  DGA_REQUIRE(!op.c_from_bias, kNotImplemented, "c_from_bias", "C from the bias table is not modelled");
  note_operands(acc, c, a, ta, b, tb, op);
  const size_t units = size_t(op.k / (kMxBlockK * kMxScalesPerUnit)) * kCubeMxUnitBytes;
  note(acc, sa, size_t((op.m + kCubeRows - 1) / kCubeRows) * units, false);
  note(acc, sb, size_t((op.n + kCubeRows - 1) / kCubeRows) * units, false);
  Operands& o = scratch();
  pack_l0(o.a, a, ta, op.m, op.k, kDotRows);
  pack_l0(o.b, b, tb, op.n, op.k, kDotCols);
  apply_mx_scales(o.a, sa, op.m, op.k, kDotRows);
  apply_mx_scales(o.b, sb, op.n, op.k, kDotCols);
  accumulate<F32C>(c, op, o);
}

}  // namespace deepgemm_ascend::npu_model
