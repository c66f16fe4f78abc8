// The NPU instruction model's cube (npu_model/cube.hpp) against a double reference, with operands placed
// as the AscendC documentation describes them ("Mmad", 950: A Nz in L0A, B Zn in L0B, C Nz in L0C; the
// b16 / b8 fractals of "LoadData（2D矩阵搬运V2）": 16 x 16, and 16 x 32 in L0A / 32 x 16 in L0B), packed
// here independently of the model. The shapes are the documentation's examples (m 40, k 70).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/cube.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;

namespace {

constexpr int kR = 16;

int64_t up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// An R x C matrix (element bytes eb) as fractals of 16 rows x 32 B, fractal columns one after the other,
// each holding all align16(R) rows (Nz for A [M, K]; for B [N, K] the same bytes are the Zn of K x N).
// `transpose_fractals` stores each fractal column-major instead: the layout error of loading B transposed.
std::vector<uint8_t> fractals(const std::vector<uint8_t>& x, int64_t rows, int64_t cols, int eb,
                              bool transpose_fractals = false) {
  const int64_t c0 = 32 / eb, r_pad = up(rows, kR), c_pad = up(cols, c0);
  std::vector<uint8_t> out(size_t(r_pad * c_pad * eb), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t in = transpose_fractals ? (c % c0) * kR + r % kR : (r % kR) * c0 + c % c0;
      const int64_t at = ((c / c0) * r_pad + r / kR * kR) * c0 + in;
      std::memcpy(&out[size_t(at * eb)], &x[size_t((r * cols + c) * eb)], size_t(eb));
    }
  return out;
}

float c_at(const std::vector<float>& c, int64_t m, int64_t i, int64_t j) {
  const int64_t m16 = up(m, kR) / kR;
  return c[size_t((j / kR * m16 + i / kR) * 256 + (i % kR) * kR + j % kR)];
}

struct Case {
  int64_t m, n, k;
  nm::CubeType ta, tb;
};

// Random operands of the case's types (bytes, row-major A [m, k] and B [n, k]) and their values.
void operands(const Case& cs, std::vector<uint8_t>& a, std::vector<uint8_t>& b, std::vector<double>& av,
              std::vector<double>& bv) {
  std::mt19937 rng(uint32_t(cs.m * 131 + cs.k));
  std::normal_distribution<float> nd;
  auto fill = [&](std::vector<uint8_t>& x, std::vector<double>& v, int64_t count, nm::CubeType t) {
    const int eb = nm::cube_type_bytes(t);
    x.assign(size_t(count * eb), 0);
    v.resize(size_t(count));
    for (int64_t i = 0; i < count; ++i) {
      const float f = nd(rng);
      if (t == nm::CubeType::kBF16) { const uint16_t h = core::float_to_bf16(f); std::memcpy(&x[size_t(2 * i)], &h, 2); }
      else if (t == nm::CubeType::kE4M3) x[size_t(i)] = core::float_to_e4m3(f);
      else x[size_t(i)] = core::float_to_e5m2(f);
      v[size_t(i)] = nm::cube_value(x.data(), t, i);
    }
  };
  fill(a, av, cs.m * cs.k, cs.ta);
  fill(b, bv, cs.n * cs.k, cs.tb);
}

// Largest |C - (init ? 0 : C0) - A B^T| relative to the row's magnitude, after one Mmad.
double max_error(const Case& cs, bool transpose_b) {
  std::vector<uint8_t> a, b;
  std::vector<double> av, bv;
  operands(cs, a, b, av, bv);
  const auto a_nz = fractals(a, cs.m, cs.k, nm::cube_type_bytes(cs.ta));
  const auto b_zn = fractals(b, cs.n, cs.k, nm::cube_type_bytes(cs.tb), transpose_b);
  std::vector<float> c(size_t(up(cs.m, kR) * up(cs.n, kR)), 7.0f);
  nm::mad(c.data(), a_nz.data(), cs.ta, b_zn.data(), cs.tb, {.m = uint16_t(cs.m), .k = uint16_t(cs.k),
                                                             .n = uint16_t(cs.n), .disable_gemv = true,
                                                             .c_from_bias = false, .init = true});
  // A second Mmad without init accumulates: C = 2 A B^T.
  nm::mad(c.data(), a_nz.data(), cs.ta, b_zn.data(), cs.tb, {.m = uint16_t(cs.m), .k = uint16_t(cs.k),
                                                             .n = uint16_t(cs.n), .disable_gemv = true,
                                                             .c_from_bias = false, .init = false});
  double worst = 0;
  for (int64_t i = 0; i < cs.m; ++i)
    for (int64_t j = 0; j < cs.n; ++j) {
      double s = 0, mag = 0;
      for (int64_t x = 0; x < cs.k; ++x) {
        s += av[size_t(i * cs.k + x)] * bv[size_t(j * cs.k + x)];
        mag += std::fabs(av[size_t(i * cs.k + x)] * bv[size_t(j * cs.k + x)]);
      }
      worst = std::max(worst, std::fabs(c_at(c, cs.m, i, j) - 2 * s) / (mag + 1e-30));
    }
  return worst;
}

}  // namespace

TEST(NpuModelCube, MmadMultipliesNzAByZnBAndAccumulates) {
  for (const Case& cs : {Case{.m = 40, .n = 24, .k = 70, .ta = nm::CubeType::kBF16, .tb = nm::CubeType::kBF16},
                         Case{.m = 1, .n = 16, .k = 32, .ta = nm::CubeType::kBF16, .tb = nm::CubeType::kBF16},
                         Case{.m = 20, .n = 33, .k = 64, .ta = nm::CubeType::kE4M3, .tb = nm::CubeType::kE5M2},
                         Case{.m = 40, .n = 24, .k = 70, .ta = nm::CubeType::kE4M3, .tb = nm::CubeType::kE4M3}})
    EXPECT_LT(max_error(cs, false), 1e-6) << cs.m << "x" << cs.n << "x" << cs.k;
}

// The error class of shared/reference/npu_primitive_review.md (B loaded transposed): the same bytes with
// every fractal of B transposed give a different product, which the model shows.
TEST(NpuModelCube, BWithTransposedFractalsGivesAnotherProduct) {
  EXPECT_GT(max_error({.m = 40, .n = 24, .k = 70, .ta = nm::CubeType::kBF16, .tb = nm::CubeType::kBF16}, true), 0.1);
}

// GEMV (Mmad's key feature "GEMV": m == 1 with disableGemv false), the page's M 1, K 256, N 32 with b16 data:
// A is the 1 x K vector, K values contiguous in L0A; C is row 0 of each 1024 B fractal, the other 15 rows
// are not written. The same bytes read as an Nz A (GEMV off) give another product.
TEST(NpuModelCube, GemvReadsAAsAContiguousVector) {
  const Case cs{.m = 1, .n = 32, .k = 256, .ta = nm::CubeType::kBF16, .tb = nm::CubeType::kBF16};
  std::vector<uint8_t> a, b;
  std::vector<double> av, bv;
  operands(cs, a, b, av, bv);
  const auto b_zn = fractals(b, cs.n, cs.k, 2);
  const auto product = [&](bool disable_gemv) {
    std::vector<float> c(size_t(kR * cs.n), 7.0f);
    std::vector<uint8_t> a_l0(size_t(up(cs.k, 16) * kR * 2), 0);  // an L0A tile of 16 rows, A at its start
    std::memcpy(a_l0.data(), a.data(), a.size());
    nm::mad(c.data(), a_l0.data(), cs.ta, b_zn.data(), cs.tb, {.m = 1, .k = uint16_t(cs.k), .n = uint16_t(cs.n),
                                                               .disable_gemv = disable_gemv, .c_from_bias = false,
                                                               .init = true});
    return c;
  };
  const auto c = product(false);
  double off_nz = 0;
  const auto nz = product(true);
  for (int64_t j = 0; j < cs.n; ++j) {
    double s = 0, mag = 0;
    for (int64_t x = 0; x < cs.k; ++x) {
      s += av[size_t(x)] * bv[size_t(j * cs.k + x)];
      mag += std::fabs(av[size_t(x)] * bv[size_t(j * cs.k + x)]);
    }
    EXPECT_LT(std::fabs(c_at(c, 1, 0, j) - s) / (mag + 1e-30), 1e-6) << "column " << j;
    for (int64_t i = 1; i < kR; ++i) EXPECT_EQ(c_at(c, kR, i, j), 7.0f) << "row " << i << " column " << j;
    off_nz = std::max(off_nz, std::fabs(c_at(nz, 1, 0, j) - s) / (mag + 1e-30));
  }
  EXPECT_GT(off_nz, 0.1);
}

TEST(NpuModelCube, UnmodelledModesAreRefused) {
  std::vector<uint8_t> a(512), b(512);
  std::vector<float> c(256);
  std::vector<uint8_t> sa(32), sb(32);
  EXPECT_THROW(nm::mad_mx(c.data(), a.data(), nm::CubeType::kE4M3, sa.data(), b.data(), nm::CubeType::kE4M3, sb.data(),
                          {.m = 1, .k = 64, .n = 16, .disable_gemv = false, .c_from_bias = false, .init = true}),
               core::Error);
  EXPECT_THROW(nm::mad(c.data(), a.data(), nm::CubeType::kBF16, b.data(), nm::CubeType::kE4M3, {.m = 16, .k = 16,
                                                                                                .n = 16,
                                                                                                .disable_gemv = true,
                                                                                                .c_from_bias = false,
                                                                                                .init = true}),
               core::Error);
}
