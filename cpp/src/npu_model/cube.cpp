#include "deepgemm_ascend/npu_model/cube.hpp"

#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
constexpr int64_t kRows = 16, kC0Bytes = 32, kFractalBytes = 512, kCFractalFloats = 256;

bool fp8(CubeType t) { return t == CubeType::kE4M3 || t == CubeType::kE5M2; }
}  // namespace

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
  }
  return 0.0;
}

void mad(float* c, const uint8_t* a, CubeType ta, const uint8_t* b, CubeType tb, const Mad& op) {
  DGA_REQUIRE(ta == tb || (fp8(ta) && fp8(tb)), kValue, "b", "the cube takes equal operand types or two fp8 types");
  DGA_REQUIRE(!(op.m == 1 && !op.disable_gemv), kNotImplemented, "disable_gemv",
              "GEMV (m == 1, A read as ND) is not modelled");
  DGA_REQUIRE(!op.c_from_bias, kNotImplemented, "c_from_bias", "C from the bias table is not modelled");
  const int64_t m16 = (op.m + kRows - 1) / kRows, n16 = (op.n + kRows - 1) / kRows;
  const int64_t ca = kC0Bytes / cube_type_bytes(ta), cb = kC0Bytes / cube_type_bytes(tb);
  const int64_t a_elems = kFractalBytes / cube_type_bytes(ta), b_elems = kFractalBytes / cube_type_bytes(tb);
  std::vector<double> av(size_t(op.m) * op.k), bv(size_t(op.n) * op.k);
  for (int64_t i = 0; i < op.m; ++i)
    for (int64_t x = 0; x < op.k; ++x)
      av[size_t(i * op.k + x)] = cube_value(a, ta, (x / ca * m16 + i / kRows) * a_elems + (i % kRows) * ca + x % ca);
  for (int64_t j = 0; j < op.n; ++j)
    for (int64_t x = 0; x < op.k; ++x)
      bv[size_t(j * op.k + x)] = cube_value(b, tb, (x / cb * n16 + j / kRows) * b_elems + (j % kRows) * cb + x % cb);
  for (int64_t i = 0; i < op.m; ++i)
    for (int64_t j = 0; j < op.n; ++j) {
      float& out = c[(j / kRows * m16 + i / kRows) * kCFractalFloats + (i % kRows) * kRows + j % kRows];
      double s = op.init ? 0.0 : double(out);
      for (int64_t x = 0; x < op.k; ++x) s += av[size_t(i * op.k + x)] * bv[size_t(j * op.k + x)];
      out = float(s);
    }
}

}  // namespace deepgemm_ascend::npu_model
