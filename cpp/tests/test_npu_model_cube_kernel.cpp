// The cube's fast arithmetic (npu_model/cube.cpp: operands decoded once into panels, a register-blocked dot
// kernel) against the straightforward formulation kept here: every output element read value by value from
// the documented L0 layouts (cube.hpp), its products (MX scales included) summed in double from the start
// value in ascending K order, rounded to fp32 once. Both orders are the same, so the results must agree bit
// for bit (NaN with NaN), for every operand type pair, m / n / k tails, with and without init, and MX scales
// that include the NaN code 0xFF. The integer Mmad (int8 x int8 -> int32) against an int64 reference, equal
// exactly, up to the largest sums its K allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/cube.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;

// A named namespace around the whole file: the unity test build joins this file with others.
namespace cube_kernel_test {

using T = nm::CubeType;
constexpr int64_t kR = 16;

int64_t up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

struct Shape {
  int64_t m, n, k;
};

// A whole L0 tile of rows x k values of type t (every byte, padding included, holds a random value).
std::vector<uint8_t> random_tile(std::mt19937& rng, T t, int64_t rows, int64_t k) {
  const int bits = nm::cube_type_bits(t);
  const int64_t c0 = 256 / bits, values = up(rows, kR) * up(k, c0);
  std::vector<uint8_t> x(size_t(values * bits / 8), 0);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (int64_t i = 0; i < values; ++i) {
    const float f = nd(rng);
    switch (t) {
      case T::kBF16: { const uint16_t h = core::float_to_bf16(f); std::memcpy(&x[size_t(2 * i)], &h, 2); break; }
      case T::kFP16: { const uint16_t h = core::float_to_fp16(f); std::memcpy(&x[size_t(2 * i)], &h, 2); break; }
      case T::kFP32: std::memcpy(&x[size_t(4 * i)], &f, 4); break;
      case T::kE4M3: x[size_t(i)] = core::float_to_e4m3(f); break;
      case T::kE5M2: x[size_t(i)] = core::float_to_e5m2(f); break;
      case T::kE2M1: x[size_t(i / 2)] |= uint8_t(core::float_to_e2m1(f) << (4 * (i % 2))); break;
      case T::kS8: x[size_t(i)] = uint8_t(int8_t(std::lround(f))); break;
    }
  }
  return x;
}

// MX scales of rows x k (k / 32 per row) in the L0 MX layout: mostly near 2^0, some extreme, some 0xFF.
std::vector<uint8_t> random_scales(std::mt19937& rng, int64_t rows, int64_t k) {
  std::vector<uint8_t> s(size_t(up(rows, kR) / kR * (k / 64) * 32));
  std::uniform_int_distribution<int> code(0, 255), near(117, 137), pick(0, 19);
  for (uint8_t& v : s) {
    const int p = pick(rng);
    v = uint8_t(p == 0 ? 0xFF : p == 1 ? code(rng) : near(rng));
  }
  return s;
}

// The reference: value (r, x) of a Nz / Zn tile and the scale of (r, group g), from the documented layouts.
double value(const std::vector<uint8_t>& p, T t, int64_t rows, int64_t r, int64_t x) {
  const int64_t c0 = 256 / nm::cube_type_bits(t), per_fractal = 4096 / nm::cube_type_bits(t);
  return nm::cube_value(p.data(), t, (x / c0 * (up(rows, kR) / kR) + r / kR) * per_fractal + (r % kR) * c0 + x % c0);
}
double scale(const std::vector<uint8_t>& s, int64_t r, int64_t g, int64_t k) {
  const uint8_t e = s[size_t(((r / kR) * (k / 64) + g / 2) * 32 + (r % kR) * 2 + g % 2)];
  return e == 0xFF ? NAN : std::ldexp(1.0, int(e) - 127);
}

struct Operands {
  T ta, tb;
  std::vector<uint8_t> a, b, sa, sb;  // sa / sb empty: a plain Mmad
};

std::vector<float> reference(const Operands& o, const Shape& s, const std::vector<float>& c0, bool init) {
  std::vector<float> c = c0;
  const int64_t m16 = up(s.m, kR) / kR;
  const bool mx = !o.sa.empty();
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      float& out = c[size_t((j / kR * m16 + i / kR) * 256 + (i % kR) * kR + j % kR)];
      double sum = init ? 0.0 : double(out);
      for (int64_t x = 0; x < s.k; ++x) {
        double p = value(o.a, o.ta, s.m, i, x) * value(o.b, o.tb, s.n, j, x);
        if (mx) p *= scale(o.sa, i, x / 32, s.k) * scale(o.sb, j, x / 32, s.k);
        sum += p;
      }
      out = float(sum);
    }
  return c;
}

bool same(float x, float y) { return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, 4) == 0; }

// Runs the model's Mmad and the reference on one case; the number of differing C elements (padding too).
int64_t mismatches(const Operands& o, const Shape& s, bool init, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 8.0f);
  std::vector<float> c0(size_t(up(s.m, kR) * up(s.n, kR)));
  for (float& v : c0) v = nd(rng);
  std::vector<float> c = c0;
  const nm::Mad op{.m = uint16_t(s.m), .k = uint16_t(s.k), .n = uint16_t(s.n), .init = init};
  if (o.sa.empty()) nm::mad(c.data(), o.a.data(), o.ta, o.b.data(), o.tb, op);
  else nm::mad_mx(c.data(), o.a.data(), o.ta, o.sa.data(), o.b.data(), o.tb, o.sb.data(), op);
  const std::vector<float> want = reference(o, s, c0, init);
  int64_t bad = 0;
  for (size_t i = 0; i < c.size(); ++i) bad += same(c[i], want[i]) ? 0 : 1;
  return bad;
}

std::string name(T t) {
  const char* names[] = {"bf16", "fp16", "fp32", "e4m3", "e5m2", "e2m1", "s8"};
  return names[int(t)];
}

void check_pairs(const std::vector<std::pair<T, T>>& pairs, const std::vector<Shape>& shapes, bool mx) {
  std::mt19937 rng(2024);
  for (const auto& [ta, tb] : pairs)
    for (const Shape& s : shapes)
      for (bool init : {true, false}) {
        Operands o{.ta = ta, .tb = tb, .a = random_tile(rng, ta, s.m, s.k), .b = random_tile(rng, tb, s.n, s.k),
                   .sa = {}, .sb = {}};
        if (mx) o.sa = random_scales(rng, s.m, s.k), o.sb = random_scales(rng, s.n, s.k);
        EXPECT_EQ(mismatches(o, s, init, rng), 0)
            << name(ta) << " x " << name(tb) << " " << s.m << "x" << s.n << "x" << s.k << (init ? " init" : "");
      }
}


TEST(NpuModelCubeKernel, MmadMatchesTheElementwiseFormulation) {
  check_pairs({{T::kBF16, T::kBF16}, {T::kFP16, T::kFP16}, {T::kFP32, T::kFP32}, {T::kE4M3, T::kE4M3},
               {T::kE4M3, T::kE5M2}, {T::kE5M2, T::kE4M3}, {T::kE5M2, T::kE5M2}},
              {{1, 1, 1}, {5, 3, 7}, {16, 8, 16}, {37, 17, 33}, {4, 40, 70}, {33, 9, 130}}, false);
}

TEST(NpuModelCubeKernel, MmadMxMatchesTheElementwiseFormulation) {
  check_pairs({{T::kE4M3, T::kE4M3}, {T::kE4M3, T::kE5M2}, {T::kE5M2, T::kE4M3}, {T::kE5M2, T::kE5M2},
               {T::kE2M1, T::kE2M1}},
              {{1, 1, 64}, {5, 3, 64}, {37, 17, 128}, {16, 40, 192}}, true);
}

// A scale code 0xFF makes its row's outputs NaN (the reference check above covers it among random codes;
// here on its own, so the case is known to occur).
TEST(NpuModelCubeKernel, MxScaleCodeFFGivesNaN) {
  std::mt19937 rng(7);
  const Shape s{16, 16, 64};
  Operands o{.ta = T::kE4M3, .tb = T::kE4M3, .a = random_tile(rng, T::kE4M3, 16, 64),
             .b = random_tile(rng, T::kE4M3, 16, 64), .sa = std::vector<uint8_t>(32, 127),
             .sb = std::vector<uint8_t>(32, 127)};
  o.sa[3 * 2 + 1] = 0xFF;  // row 3, K group 1
  std::vector<float> c(256, 0.0f);
  nm::mad_mx(c.data(), o.a.data(), o.ta, o.sa.data(), o.b.data(), o.tb, o.sb.data(), {.m = 16, .k = 64, .n = 16,
                                                                                      .init = true});
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(std::isnan(c[size_t(i * 16 + j)]), i == 3) << i << "," << j;
}

// HF32 mode (CTRL[46]) rounds fp32 operands before the product in a way the model does not model: refused
// for fp32, and other operand types (which it does not touch) still run.
TEST(NpuModelCubeKernel, Hf32WithFp32OperandsIsRefused) {
  std::vector<uint8_t> a(2048), b(2048);
  std::vector<float> c(256);
  const nm::Mad op{.m = 16, .k = 8, .n = 16, .init = true, .hf32 = true};
  try {
    nm::mad(c.data(), a.data(), T::kFP32, b.data(), T::kFP32, op);
    ADD_FAILURE() << "HF32 with fp32 operands ran";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CTRL[46]"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(nm::mad(c.data(), a.data(), T::kBF16, b.data(), T::kBF16, op));
}

// ---- the integer Mmad (int8 x int8 -> int32) ----------------------------------------------------------

namespace {

// A whole int8 L0 tile of rows x k (c0 = 32), every byte random over the full int8 range.
std::vector<uint8_t> random_s8_tile(std::mt19937& rng, int64_t rows, int64_t k) {
  std::vector<uint8_t> x(size_t(up(rows, kR) * up(k, 32)));
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& v : x) v = uint8_t(byte(rng));
  return x;
}

// The reference in int64: value (r, x) of the Nz / Zn tile read byte by byte, the sum exact.
std::vector<int32_t> reference_s8(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const Shape& s,
                                  const std::vector<int32_t>& c0, bool init) {
  const auto at = [](const std::vector<uint8_t>& p, int64_t rows, int64_t r, int64_t x) {
    return int64_t(int8_t(p[size_t((x / 32 * (up(rows, kR) / kR) + r / kR) * 512 + (r % kR) * 32 + x % 32)]));
  };
  std::vector<int32_t> c = c0;
  const int64_t m16 = up(s.m, kR) / kR;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      int32_t& out = c[size_t((j / kR * m16 + i / kR) * 256 + (i % kR) * kR + j % kR)];
      int64_t sum = init ? 0 : out;
      for (int64_t x = 0; x < s.k; ++x) sum += at(a, s.m, i, x) * at(b, s.n, j, x);
      out = int32_t(sum);
    }
  return c;
}

}  // namespace

TEST(NpuModelCubeKernel, MmadS8MatchesTheElementwiseFormulation) {
  std::mt19937 rng(2025);
  std::uniform_int_distribution<int32_t> start(-(1 << 28), 1 << 28);
  for (const Shape& s : std::vector<Shape>{{1, 1, 1}, {5, 3, 7}, {16, 8, 32}, {37, 17, 33}, {4, 40, 70}, {33, 9, 130}})
    for (bool init : {true, false}) {
      const std::vector<uint8_t> a = random_s8_tile(rng, s.m, s.k), b = random_s8_tile(rng, s.n, s.k);
      std::vector<int32_t> c0(size_t(up(s.m, kR) * up(s.n, kR)));
      for (int32_t& v : c0) v = start(rng);
      std::vector<int32_t> c = c0;
      nm::mad_s8(c.data(), a.data(), b.data(), {.m = uint16_t(s.m), .k = uint16_t(s.k), .n = uint16_t(s.n),
                                                .init = init});
      EXPECT_EQ(c, reference_s8(a, b, s, c0, init)) << s.m << "x" << s.n << "x" << s.k << (init ? " init" : "");
    }
}

// The largest sums a Mmad can make: K = 4095 (Mmad.md's limit) products of -128 x -128 = 2^14 on a start of
// INT32_MAX - 4095 * 2^14 land exactly on INT32_MAX (each partial sum is exact in double); one more unit
// of start leaves int32, which the documentation does not define: refused.
TEST(NpuModelCubeKernel, MmadS8IsExactUpToInt32AndRefusesBeyond) {
  constexpr int64_t kK = 4095, kProduct = 128 * 128;
  const std::vector<uint8_t> a(size_t(up(kK, 32) * kR), uint8_t(0x80)), b = a;
  std::vector<int32_t> c(256, int32_t(INT32_MAX - kK * kProduct));
  const nm::Mad op{.m = 16, .k = uint16_t(kK), .n = 16};
  nm::mad_s8(c.data(), a.data(), b.data(), op);
  for (int32_t v : c) ASSERT_EQ(v, INT32_MAX);
  std::fill(c.begin(), c.end(), int32_t(INT32_MAX - kK * kProduct + 1));
  try {
    nm::mad_s8(c.data(), a.data(), b.data(), op);
    ADD_FAILURE() << "an int32 overflow was accepted";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside int32"), std::string::npos) << e.what();
  }
}

// int8 operands through the float Mmad (its C is fp32) are refused: the type table gives them an int32 C.
TEST(NpuModelCubeKernel, S8OperandsNeedTheIntegerMmad) {
  std::vector<uint8_t> a(512), b(512);
  std::vector<float> c(256);
  EXPECT_THROW(nm::mad(c.data(), a.data(), T::kS8, b.data(), T::kS8, {.m = 16, .k = 32, .n = 16, .init = true}),
               core::Error);
}

}  // namespace cube_kernel_test
