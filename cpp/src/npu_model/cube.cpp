#include "deepgemm_ascend/npu_model/cube.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/cube_checks.hpp"
#include "deepgemm_ascend/npu_model/data_move.hpp"
#include "deepgemm_ascend/npu_model/load2d.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
// The fractal and MX scale unit sizes of data_move.hpp / load2d.hpp, signed for the index arithmetic below.
constexpr int64_t kCubeRows = 16, kCubeC0Bytes = int64_t(kC0Bytes), kCubeFractalBytes = int64_t(kFractalBytes),
                  kCFractalFloats = 256;

bool fp8(CubeType t) { return t == CubeType::kE4M3 || t == CubeType::kE5M2; }

constexpr int kMxBlockK = 32, kMxScalesPerUnit = 2, kCubeMxUnitBytes = int(kMxUnitBytes), kUe8m0Bias = 127;

// Operand values of a Nz (A) / Zn (B) L0 tile: rows x k, c0 values of K per 32 B row.
std::vector<double> l0_values(const uint8_t* p, CubeType t, int64_t rows, int64_t k) {
  const int64_t r16 = (rows + kCubeRows - 1) / kCubeRows, c0 = kCubeC0Bytes * 8 / cube_type_bits(t);
  const int64_t per_fractal = kCubeFractalBytes * 8 / cube_type_bits(t);
  std::vector<double> v(size_t(rows * k));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < k; ++x)
      v[size_t(r * k + x)] =
          cube_value(p, t, (x / c0 * r16 + r / kCubeRows) * per_fractal + (r % kCubeRows) * c0 + x % c0);
  return v;
}

// C (fp32 Nz, m x n) = sum(i, j, start): start is 0 with init, else the C element; summed in double and
// rounded once.
template <class Sum>
void accumulate(float* c, const Mad& op, Sum sum) {
  const int64_t m16 = (op.m + kCubeRows - 1) / kCubeRows;
  for (int64_t i = 0; i < op.m; ++i)
    for (int64_t j = 0; j < op.n; ++j) {
      float& out =
          c[(j / kCubeRows * m16 + i / kCubeRows) * kCFractalFloats + (i % kCubeRows) * kCubeRows + j % kCubeRows];
      out = float(sum(i, j, op.init ? 0.0 : double(out)));
    }
}

// The L0 bytes of a Mmad: A and B tiles (whole fractals), C (read unless init, written).
void note_operands(Accesses* acc, const float* c, const uint8_t* a, CubeType ta, const uint8_t* b, CubeType tb,
                   const Mad& op) {
  const auto tile = [&](int64_t rows, CubeType t) {
    const int64_t c0 = kCubeC0Bytes * 8 / cube_type_bits(t);
    return size_t((rows + kCubeRows - 1) / kCubeRows * ((op.k + c0 - 1) / c0) * kCubeFractalBytes);
  };
  note(acc, a, tile(op.m, ta), false);
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
  }
  return 0.0;
}

void mad(float* c, const uint8_t* a, CubeType ta, const uint8_t* b, CubeType tb, const Mad& op, Accesses* acc) {
  check_mad_operands(c, a, b, op, acc);
  DGA_REQUIRE(ta == tb || (fp8(ta) && fp8(tb)), kValue, "b", "the cube takes equal operand types or two fp8 types");
  DGA_REQUIRE(!(op.m == 1 && !op.disable_gemv), kNotImplemented, "disable_gemv",
              "GEMV (m == 1, A read as ND) is not modelled");
  DGA_REQUIRE(!op.c_from_bias, kNotImplemented, "c_from_bias", "C from the bias table is not modelled");
  DGA_REQUIRE(ta != CubeType::kE2M1 && tb != CubeType::kE2M1, kValue, "a", "fp4 operands need the MX Mmad");
  note_operands(acc, c, a, ta, b, tb, op);
  const auto av = l0_values(a, ta, op.m, op.k), bv = l0_values(b, tb, op.n, op.k);
  accumulate(c, op, [&](int64_t i, int64_t j, double s) {
    for (int64_t x = 0; x < op.k; ++x) s += av[size_t(i * op.k + x)] * bv[size_t(j * op.k + x)];
    return s;
  });
}

void mad_mx(float* c, const uint8_t* a, CubeType ta, const uint8_t* sa, const uint8_t* b, CubeType tb,
            const uint8_t* sb, const Mad& op, Accesses* acc) {
  const bool fp4 = ta == CubeType::kE2M1 && tb == CubeType::kE2M1;
  DGA_REQUIRE(fp4 || (fp8(ta) && fp8(tb)), kValue, "b", "the MX cube takes two fp8 or two fp4 operands");
  check_mad_mx_operands(c, a, b, fp4, op, acc);
  DGA_REQUIRE(op.k % (kMxBlockK * kMxScalesPerUnit) == 0, kValue, "k", "the MX Mmad needs K a multiple of 64, got ",
              op.k);
  DGA_REQUIRE(!(op.m == 1 && !op.disable_gemv), kNotImplemented, "disable_gemv", "GEMV is not modelled");
  DGA_REQUIRE(!op.c_from_bias, kNotImplemented, "c_from_bias", "C from the bias table is not modelled");
  note_operands(acc, c, a, ta, b, tb, op);
  const size_t units = size_t(op.k / (kMxBlockK * kMxScalesPerUnit)) * kCubeMxUnitBytes;
  note(acc, sa, size_t((op.m + kCubeRows - 1) / kCubeRows) * units, false);
  note(acc, sb, size_t((op.n + kCubeRows - 1) / kCubeRows) * units, false);
  const auto av = l0_values(a, ta, op.m, op.k), bv = l0_values(b, tb, op.n, op.k);
  accumulate(c, op, [&](int64_t i, int64_t j, double s) {
    for (int64_t x = 0; x < op.k; ++x)
      s += av[size_t(i * op.k + x)] * mx_scale(sa, i, x / kMxBlockK, op.k) * bv[size_t(j * op.k + x)] *
           mx_scale(sb, j, x / kMxBlockK, op.k);
    return s;
  });
}

}  // namespace deepgemm_ascend::npu_model
