// The runner's binary16 conversions (cpp/npu_model/runner/binary16.h, behind the `half` of programs
// npu_run.py builds): IEEE 754 binary16, round to nearest even, checked against the nearest representable
// value found by search over every finite binary16, and exhaustively on the way back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "npu_model/runner/binary16.h"

namespace b16 = dga_run::binary16;

namespace {
// The finite binary16 values >= 0, ascending, with their bits.
std::vector<std::pair<double, uint16_t>> finite_positive() {
  std::vector<std::pair<double, uint16_t>> v;
  for (uint32_t e = 0; e < 31; ++e)
    for (uint32_t m = 0; m < 1024; ++m)
      v.push_back({e ? std::ldexp(1024.0 + m, int(e) - 25) : std::ldexp(double(m), -24), uint16_t(e << 10 | m)});
  return v;
}

// The binary16 nearest to |x| (ties to the even significand), by search; infinity past the largest value's
// rounding boundary (65520).
uint16_t nearest(double x) {
  static const auto table = finite_positive();
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7C00;
  const auto hi = std::lower_bound(table.begin(), table.end(), std::make_pair(a, uint16_t(0)));
  if (hi == table.end()) return sign | 0x7BFF;  // (65504, 65520)
  if (hi->first == a) return sign | hi->second;
  const auto lo = hi - 1;
  const double dl = a - lo->first, dh = hi->first - a;
  const bool up = dh < dl || (dh == dl && (hi->second & 1) == 0);
  return sign | (up ? hi->second : lo->second);
}
}  // namespace

static_assert(b16::from_double(-65504.0) == 0xFBFF);
static_assert(b16::to_float(0x3C00) == 1.0f);

TEST(RunnerBinary16, EveryValueConvertsToFloatAndBack) {
  const auto table = finite_positive();
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = b16::to_float(uint16_t(h));
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
    if (nan) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_EQ(b16::from_double(f), uint16_t(h | 0x200)) << h;  // quietened, sign and payload kept
    } else {
      EXPECT_EQ(b16::from_double(f), h) << h;
      EXPECT_EQ(double(f), (h & 0x8000 ? -1.0 : 1.0) *
                              ((h & 0x7C00) == 0x7C00 ? INFINITY : table[h & 0x7FFF].first)) << h;
    }
  }
}

TEST(RunnerBinary16, RoundsToNearestEven) {
  // halfway cases: 1 + 2^-11 (to 1, even), 1 + 3 * 2^-11 (to 1 + 2^-9), the smallest subnormal's half (to 0)
  // and 1.5 times it (to 2^-23), and past the largest finite value
  EXPECT_EQ(b16::from_double(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  EXPECT_EQ(b16::from_double(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  EXPECT_EQ(b16::from_double(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(b16::from_double(3 * std::ldexp(1.0, -25)), 0x0002);
  EXPECT_EQ(b16::from_double(65519.99), 0x7BFF);
  EXPECT_EQ(b16::from_double(65520.0), 0x7C00);
  EXPECT_EQ(b16::from_double(-1e300), 0xFC00);
  EXPECT_EQ(b16::from_double(-0.0), 0x8000);
  // every boundary between neighbours, and random floats, against the search
  const auto table = finite_positive();
  for (size_t i = 0; i + 1 < table.size(); ++i) {
    const double mid = (table[i].first + table[i + 1].first) / 2;
    ASSERT_EQ(b16::from_double(mid), nearest(mid)) << mid;
    ASSERT_EQ(b16::from_double(-mid), nearest(-mid)) << mid;
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(rng);
    u = (u & 0x80000000u) | (0x30000000u + (u & 0x7FFFFFFu) * 3);  // magnitudes 2^-31 .. 2^18
    float f;
    std::memcpy(&f, &u, 4);
    ASSERT_EQ(b16::from_double(f), nearest(f)) << f;
  }
}
