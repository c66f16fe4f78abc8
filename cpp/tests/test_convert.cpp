// Exhaustive and randomized tests of the scalar codecs in core/convert.hpp.
//
// Expected values never come from the library: decoding uses an explicit sign/exponent/mantissa
// formula written here, and encoding is checked against a brute-force "nearest representable value,
// ties to even" search over a table of every finite value of the format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"

namespace dc = deepgemm_ascend::core;

namespace {

enum class Specials { kIeee, kFiniteNaNOnly, kNone };  // IEEE inf/NaN | E4M3FN (S.1111.111 NaN) | none

struct Fmt {
  const char* name;
  int e_bits, m_bits, bias;
  Specials specials;
  uint32_t (*encode)(float);
  double (*decode)(uint32_t);
};

const Fmt kBF16{"bf16", 8, 7, 127, Specials::kIeee, [](float x) { return uint32_t(dc::float_to_bf16(x)); },
                [](uint32_t c) { return double(dc::bf16_to_float(uint16_t(c))); }};
const Fmt kFP16{"fp16", 5, 10, 15, Specials::kIeee, [](float x) { return uint32_t(dc::float_to_fp16(x)); },
                [](uint32_t c) { return double(dc::fp16_to_float(uint16_t(c))); }};
const Fmt kE4M3{"e4m3", 4, 3, 7, Specials::kFiniteNaNOnly, [](float x) { return uint32_t(dc::float_to_e4m3(x)); },
                [](uint32_t c) { return double(dc::e4m3_to_float(uint8_t(c))); }};
const Fmt kE5M2{"e5m2", 5, 2, 15, Specials::kIeee, [](float x) { return uint32_t(dc::float_to_e5m2(x)); },
                [](uint32_t c) { return double(dc::e5m2_to_float(uint8_t(c))); }};
const Fmt kE2M1{"e2m1", 2, 1, 1, Specials::kNone, [](float x) { return uint32_t(dc::float_to_e2m1(x)); },
                [](uint32_t c) { return double(dc::e2m1_to_float(uint8_t(c))); }};
const Fmt* const kAllFormats[] = {&kBF16, &kFP16, &kE4M3, &kE5M2, &kE2M1};

int width(const Fmt& f) { return f.e_bits + f.m_bits; }
uint32_t sign_bit(const Fmt& f) { return 1u << width(f); }
uint32_t num_codes(const Fmt& f) { return 1u << (width(f) + 1); }
double pow2(int e) { return std::ldexp(1.0, e); }  // exact power of two

// Largest finite magnitude code.
uint32_t max_finite(const Fmt& f) {
  const uint32_t all = (1u << width(f)) - 1;
  switch (f.specials) {
    case Specials::kIeee: return (((1u << f.e_bits) - 1) << f.m_bits) - 1;
    case Specials::kFiniteNaNOnly: return all - 1;
    case Specials::kNone: return all;
  }
  return all;
}
uint32_t inf_code(const Fmt& f) { return ((1u << f.e_bits) - 1) << f.m_bits; }  // only for kIeee

// Reference decoder: (-1)^s * 2^(e - bias) * (1 + m / 2^M), subnormals 2^(1 - bias) * (m / 2^M).
double ref_decode(uint32_t code, const Fmt& f) {
  const uint32_t s = (code >> width(f)) & 1u;
  const uint32_t e = (code >> f.m_bits) & ((1u << f.e_bits) - 1);
  const uint32_t m = code & ((1u << f.m_bits) - 1);
  const uint32_t e_max = (1u << f.e_bits) - 1, m_max = (1u << f.m_bits) - 1;
  double mag;
  if (f.specials == Specials::kIeee && e == e_max) {
    mag = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (f.specials == Specials::kFiniteNaNOnly && e == e_max && m == m_max) {
    mag = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    mag = (double(m) / pow2(f.m_bits)) * pow2(1 - f.bias);
  } else {
    mag = (1.0 + double(m) / pow2(f.m_bits)) * pow2(int(e) - f.bias);
  }
  return s ? -mag : mag;
}

// Value the code one past max_finite would have if the exponent range continued (for rounding).
double virtual_next_after_max(const Fmt& f) {
  const uint32_t e = (max_finite(f) >> f.m_bits) + ((max_finite(f) & ((1u << f.m_bits) - 1)) == (1u << f.m_bits) - 1);
  const uint32_t m = (max_finite(f) + 1) & ((1u << f.m_bits) - 1);
  return (1.0 + double(m) / pow2(f.m_bits)) * pow2(int(e) - f.bias);
}

// Brute-force encoder: table of every non-negative finite value (monotone in the code), nearest by
// distance, ties to the even code. Returns -1 when the result must be "some NaN".
struct RefEncoder {
  const Fmt& f;
  std::vector<double> vals;  // vals[c] = value of magnitude code c, c in [0, max_finite]
  explicit RefEncoder(const Fmt& fmt) : f(fmt) {
    for (uint32_t c = 0; c <= max_finite(f); ++c) vals.push_back(ref_decode(c, f));
  }
  int64_t operator()(float x) const {
    if (std::isnan(x)) return f.specials == Specials::kNone ? 0 : -1;
    const uint32_t sign = std::signbit(x) ? sign_bit(f) : 0u;
    const uint32_t maxc = max_finite(f);
    const uint32_t overflow = f.specials == Specials::kIeee ? inf_code(f) : maxc;
    if (std::isinf(x)) return sign | overflow;
    const double a = std::fabs(double(x));
    const auto it = std::upper_bound(vals.begin(), vals.end(), a);
    const uint32_t lo = uint32_t(it - vals.begin()) - 1;  // vals[lo] <= a
    if (vals[lo] == a) return sign | lo;
    const double lo_v = vals[lo];
    const double hi_v = lo == maxc ? virtual_next_after_max(f) : vals[lo + 1];
    const double dl = a - lo_v, dh = hi_v - a;  // exact: both operands are close and fine-grained
    uint32_t pick = dl < dh ? lo : dh < dl ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    if (pick > maxc) pick = overflow;
    if (lo == maxc && f.specials != Specials::kIeee) pick = maxc;  // saturating formats
    return sign | pick;
  }
};

bool is_nan_code(uint32_t code, const Fmt& f) { return std::isnan(ref_decode(code, f)); }

float fbits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// ---- decode -----------------------------------------------------------------------------------

TEST(ConvertDecode, EveryCodeMatchesFormula) {
  for (const Fmt* f : kAllFormats) {
    int bad = 0;
    for (uint32_t c = 0; c < num_codes(*f) && bad < 10; ++c) {
      const double want = ref_decode(c, *f), got = f->decode(c);
      if (std::isnan(want)) {
        if (!std::isnan(got)) {
          ++bad;
          ADD_FAILURE() << f->name << " code " << c << " should be NaN, got " << got;
        }
        continue;
      }
      if (got != want || std::signbit(got) != std::signbit(want)) {
        ++bad;
        ADD_FAILURE() << f->name << " code 0x" << std::hex << c << std::dec << ": got " << got << " want " << want;
      }
    }
  }
}

TEST(ConvertDecode, KnownValues) {
  EXPECT_EQ(dc::bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(dc::bf16_to_float(0xC040), -3.0f);
  EXPECT_EQ(dc::fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(dc::fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(dc::fp16_to_float(0x7C00)));
  EXPECT_EQ(dc::e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(dc::e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(dc::e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(dc::e4m3_to_float(0xFF)));
  EXPECT_EQ(dc::e4m3_to_float(0xF8), -256.0f);  // 0x78 is finite in E4M3FN
  EXPECT_EQ(dc::e5m2_to_float(0x7B), 57344.0f);
  EXPECT_TRUE(std::isinf(dc::e5m2_to_float(0xFC)) && dc::e5m2_to_float(0xFC) < 0);
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (uint8_t c = 0; c < 16; ++c) {
    const float want = c & 8 ? -e2m1[c & 7] : e2m1[c & 7];
    EXPECT_EQ(dc::e2m1_to_float(c), want) << int(c);
    EXPECT_EQ(std::signbit(dc::e2m1_to_float(c)), bool(c & 8)) << int(c);
    EXPECT_EQ(dc::e2m1_to_float(uint8_t(c | 0xA0)), want) << "only the low nibble is the code";
  }
}

TEST(ConvertDecode, Ue8m0EveryCode) {
  for (int c = 0; c < 256; ++c) {
    const float got = dc::ue8m0_to_float(uint8_t(c));
    if (c == 255) {
      EXPECT_TRUE(std::isnan(got));
    } else {
      EXPECT_EQ(double(got), pow2(c - 127)) << "code " << c;
    }
  }
}

// ---- encode: round trip -------------------------------------------------------------------------

TEST(ConvertEncode, RoundTripEveryNonNaNCode) {
  for (const Fmt* f : kAllFormats) {
    int bad = 0;
    for (uint32_t c = 0; c < num_codes(*f) && bad < 10; ++c) {
      if (is_nan_code(c, *f)) continue;
      const uint32_t got = f->encode(float(ref_decode(c, *f)));
      if (got != c) {
        ++bad;
        ADD_FAILURE() << f->name << " code 0x" << std::hex << c << " re-encodes to 0x" << got;
      }
    }
  }
  for (int c = 0; c < 255; ++c)
    for (auto mode : {dc::Ue8m0Rounding::kNearestEven, dc::Ue8m0Rounding::kCeil, dc::Ue8m0Rounding::kFloor})
      EXPECT_EQ(dc::float_to_ue8m0(float(pow2(c - 127)), mode), c) << "mode " << int(mode);
}

// ---- encode: midpoints of every pair of adjacent finite codes ----------------------------------

TEST(ConvertEncode, MidpointsTieToEvenAndNeighboursRoundToNearer) {
  for (const Fmt* f : kAllFormats) {
    int bad = 0;
    const uint32_t maxc = max_finite(*f);
    for (uint32_t p = 0; p < maxc && bad < 10; ++p) {
      const double lo = ref_decode(p, *f), hi = ref_decode(p + 1, *f);
      const double mid = (lo + hi) / 2;
      const float fm = float(mid);
      ASSERT_EQ(double(fm), mid) << f->name << ": midpoint not representable in float (test precondition)";
      const uint32_t even = p % 2 == 0 ? p : p + 1;
      const float up = std::nextafter(fm, INFINITY), down = std::nextafter(fm, 0.0f);
      for (uint32_t s : {0u, sign_bit(*f)}) {
        const float sg = s ? -1.0f : 1.0f;
        const uint32_t g_mid = f->encode(sg * fm), g_up = f->encode(sg * up), g_down = f->encode(sg * down);
        if (g_mid != (s | even) || g_up != (s | (p + 1)) || g_down != (s | p)) {
          ++bad;
          ADD_FAILURE() << f->name << " between codes 0x" << std::hex << (s | p) << " and 0x" << (s | (p + 1))
                               << std::dec << " (mid " << sg * mid << "): mid->0x" << std::hex << g_mid << " up->0x"
                               << g_up << " down->0x" << g_down;
        }
      }
    }
  }
}

// Between the largest finite value and the next (virtual) binade value.
TEST(ConvertEncode, OverflowBoundary) {
  for (const Fmt* f : kAllFormats) {
    const uint32_t maxc = max_finite(*f);
    const double mx = ref_decode(maxc, *f), mid = (mx + virtual_next_after_max(*f)) / 2;
    const float fm = float(mid);
    ASSERT_EQ(double(fm), mid);
    const uint32_t over = f->specials == Specials::kIeee ? inf_code(*f) : maxc;
    for (uint32_t s : {0u, sign_bit(*f)}) {
      const float sg = s ? -1.0f : 1.0f;
      EXPECT_EQ(f->encode(sg * std::nextafter(fm, 0.0f)), s | maxc) << f->name;
      EXPECT_EQ(f->encode(sg * fm), s | over) << f->name << " tie at the top goes to the even (overflow) side";
      EXPECT_EQ(f->encode(sg * std::nextafter(fm, INFINITY)), s | over) << f->name;
      EXPECT_EQ(f->encode(sg * FLT_MAX), s | over) << f->name;
      EXPECT_EQ(f->encode(sg * INFINITY), s | over) << f->name;
    }
  }
}

// ---- encode: specials named in the header ------------------------------------------------------

TEST(ConvertEncode, E4M3SaturatesAndNaN) {
  for (float x : {448.0f, 449.0f, 464.0f, 480.0f, 1000.0f, 1e30f, FLT_MAX, INFINITY}) {
    EXPECT_EQ(dc::float_to_e4m3(x), 0x7E) << x;
    EXPECT_EQ(dc::float_to_e4m3(-x), 0xFE) << -x;
  }
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(dc::float_to_e4m3(qnan), 0x7F);
  EXPECT_EQ(dc::float_to_e4m3(-qnan), 0xFF);
  EXPECT_EQ(dc::float_to_e4m3(fbits(0x7F800001u)), 0x7F);  // signalling NaN
  EXPECT_EQ(dc::float_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(dc::float_to_e4m3(std::ldexp(1.0f, -11)), 0x00);   // quarter of the smallest subnormal
  EXPECT_EQ(dc::float_to_e4m3(-std::ldexp(1.0f, -11)), 0x80);
  EXPECT_EQ(dc::float_to_e4m3(std::ldexp(1.0f, -10)), 0x00);   // exact half: tie to even (0)
  EXPECT_EQ(dc::float_to_e4m3(std::ldexp(3.0f, -11)), 0x01);
}

TEST(ConvertEncode, InfinityFormatsOverflowAndNaN) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  const float snan = fbits(0x7F800001u), neg_snan = fbits(0xFF800001u);
  // bf16
  EXPECT_EQ(dc::float_to_bf16(INFINITY), 0x7F80);
  EXPECT_EQ(dc::float_to_bf16(-INFINITY), 0xFF80);
  EXPECT_EQ(dc::float_to_bf16(fbits(0x7F7F7FFFu)), 0x7F7F);
  EXPECT_EQ(dc::float_to_bf16(fbits(0x7F7F8000u)), 0x7F80);  // tie at the top -> inf
  for (float n : {qnan, -qnan, snan, neg_snan}) {
    const uint16_t h = dc::float_to_bf16(n);
    EXPECT_EQ(h & 0x7F80, 0x7F80);
    EXPECT_NE(h & 0x007F, 0) << "NaN must stay NaN, not become inf (input bits " << std::hex << dc::float_bits(n) << ")";
    EXPECT_EQ(bool(h & 0x8000), std::signbit(n));
  }
  EXPECT_EQ(dc::float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(dc::float_to_bf16(fbits(0x00008000u)), 0x0000);  // float subnormal tie -> even
  EXPECT_EQ(dc::float_to_bf16(fbits(0x00018000u)), 0x0002);
  // fp16
  EXPECT_EQ(dc::float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(dc::float_to_fp16(65519.99f), 0x7BFF);
  EXPECT_EQ(dc::float_to_fp16(65520.0f), 0x7C00);
  EXPECT_EQ(dc::float_to_fp16(-1e10f), 0xFC00);
  EXPECT_EQ(dc::float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(dc::float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(dc::float_to_fp16(-std::ldexp(1.0f, -25)), 0x8000);
  EXPECT_EQ(dc::float_to_fp16(fbits(0x00000001u)), 0x0000);
  EXPECT_EQ(dc::float_to_fp16(fbits(0x80000001u)), 0x8000);
  // e5m2
  EXPECT_EQ(dc::float_to_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(dc::float_to_e5m2(61439.0f), 0x7B);  // just below the midpoint of 57344 and 65536
  EXPECT_EQ(dc::float_to_e5m2(61440.0f), 0x7C);  // midpoint: ties to the even side, inf
  EXPECT_EQ(dc::float_to_e5m2(-INFINITY), 0xFC);
  for (float n : {qnan, -qnan, snan}) {
    EXPECT_TRUE(std::isnan(dc::fp16_to_float(dc::float_to_fp16(n))));
    EXPECT_TRUE(std::isnan(dc::e5m2_to_float(dc::float_to_e5m2(n))));
    EXPECT_EQ(bool(dc::float_to_fp16(n) & 0x8000), std::signbit(n));
    EXPECT_EQ(bool(dc::float_to_e5m2(n) & 0x80), std::signbit(n));
  }
}

TEST(ConvertEncode, E2M1SaturatesAndNaNIsPositiveZero) {
  for (float x : {6.0f, 6.5f, 7.0f, 100.0f, 1e30f, FLT_MAX, INFINITY}) {
    EXPECT_EQ(dc::float_to_e2m1(x), 0x7) << x;
    EXPECT_EQ(dc::float_to_e2m1(-x), 0xF) << -x;
  }
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(dc::float_to_e2m1(qnan), 0x0);
  EXPECT_EQ(dc::float_to_e2m1(-qnan), 0x0);
  EXPECT_EQ(dc::float_to_e2m1(fbits(0xFF800001u)), 0x0);
  EXPECT_EQ(dc::float_to_e2m1(-0.0f), 0x8);
  EXPECT_EQ(dc::float_to_e2m1(5.0f), 0x6);    // tie between 4 (0x6) and 6 (0x7)
  EXPECT_EQ(dc::float_to_e2m1(2.5f), 0x4);    // tie between 2 (0x4) and 3 (0x5)
  EXPECT_EQ(dc::float_to_e2m1(0.75f), 0x2);   // tie between 0.5 (0x1) and 1 (0x2)
  EXPECT_EQ(dc::float_to_e2m1(0.25f), 0x0);   // tie between 0 and 0.5
  EXPECT_EQ(dc::float_to_e2m1(-0.25f), 0x8);
  EXPECT_EQ(dc::float_to_e2m1(0.2500001f), 0x1);
  for (float x : {0.0f, 0.3f, 1.2f, 5.9f, 7.0f, -3.3f}) EXPECT_LT(dc::float_to_e2m1(x), 16) << "code is a low nibble";
}

// ---- UE8M0 -------------------------------------------------------------------------------------

TEST(ConvertUe8m0, SpecialsAndClamping) {
  using M = dc::Ue8m0Rounding;
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  for (M mode : {M::kNearestEven, M::kCeil, M::kFloor}) {
    SCOPED_TRACE(int(mode));
    EXPECT_EQ(dc::float_to_ue8m0(qnan, mode), 0xFF);
    EXPECT_EQ(dc::float_to_ue8m0(-qnan, mode), 0xFF);
    for (float neg : {-1.0f, -1e-30f, -FLT_MAX, -INFINITY, -fbits(1)}) EXPECT_EQ(dc::float_to_ue8m0(neg, mode), 0xFF) << neg;
    EXPECT_EQ(dc::float_to_ue8m0(INFINITY, mode), 254);
    EXPECT_EQ(dc::float_to_ue8m0(FLT_MAX, mode), 254);
    EXPECT_EQ(dc::float_to_ue8m0(std::ldexp(1.0f, 127), mode), 254);
    EXPECT_EQ(dc::float_to_ue8m0(0.0f, mode), 0);
    EXPECT_EQ(dc::float_to_ue8m0(-0.0f, mode), 0) << "-0 is zero, not a negative value";
    for (uint32_t bits : {1u, 2u, 3u, 0x00100000u, 0x00300001u})  // float subnormals below 2^-127
      EXPECT_EQ(dc::float_to_ue8m0(fbits(bits), mode), 0) << std::hex << bits;
  }
  EXPECT_EQ(dc::float_to_ue8m0(1.0f), 127);
  EXPECT_EQ(dc::float_to_ue8m0(std::ldexp(1.5f, 127)), 254);  // tie between 254 (even) and 255
  EXPECT_EQ(dc::float_to_ue8m0(std::ldexp(1.75f, 127)), 254); // rounds to 2^128, clamped
}

TEST(ConvertUe8m0, NearestEvenMidpoints) {
  for (int c = 0; c < 254; ++c) {
    const float lo = float(pow2(c - 127));
    const float mid = lo * 1.5f;  // midpoint of [2^e, 2^(e+1)], exact in float
    ASSERT_EQ(double(mid), 1.5 * pow2(c - 127));
    const int even = c % 2 == 0 ? c : c + 1;
    EXPECT_EQ(dc::float_to_ue8m0(mid), even) << "code " << c;
    EXPECT_EQ(dc::float_to_ue8m0(std::nextafter(mid, INFINITY)), c + 1) << "code " << c;
    EXPECT_EQ(dc::float_to_ue8m0(std::nextafter(mid, 0.0f)), c) << "code " << c;
  }
}

TEST(ConvertUe8m0, CeilAndFloor) {
  using M = dc::Ue8m0Rounding;
  for (int e = -127; e <= 127; ++e) {
    const float p = float(pow2(e));
    const int code = e + 127;
    EXPECT_EQ(dc::float_to_ue8m0(p, M::kCeil), code) << e;
    EXPECT_EQ(dc::float_to_ue8m0(p, M::kFloor), code) << e;
    const float above = std::nextafter(p, INFINITY), below = std::nextafter(p, 0.0f);
    EXPECT_EQ(dc::float_to_ue8m0(above, M::kCeil), std::min(code + 1, 254)) << e;
    EXPECT_EQ(dc::float_to_ue8m0(above, M::kFloor), code) << e;
    EXPECT_EQ(dc::float_to_ue8m0(below, M::kCeil), code) << e;
    EXPECT_EQ(dc::float_to_ue8m0(below, M::kFloor), std::max(code - 1, 0)) << e;
    if (e >= -126 && e <= 126) {
      for (float frac : {1.001f, 1.25f, 1.4999f, 1.5f, 1.5001f, 1.75f, 1.999f}) {
        const float x = frac * p;
        EXPECT_EQ(dc::float_to_ue8m0(x, M::kCeil), code + 1) << frac << "*2^" << e;
        EXPECT_EQ(dc::float_to_ue8m0(x, M::kFloor), code) << frac << "*2^" << e;
        if (frac != 1.5f) {
          EXPECT_EQ(dc::float_to_ue8m0(x), frac < 1.5f ? code : code + 1) << frac << "*2^" << e;
        }
      }
    }
  }
  EXPECT_EQ(dc::float_to_ue8m0(3.0f, M::kCeil), 129);
  EXPECT_EQ(dc::float_to_ue8m0(3.0f, M::kFloor), 128);
  EXPECT_EQ(dc::float_to_ue8m0(0.3f, M::kCeil), 126);   // 0.5
  EXPECT_EQ(dc::float_to_ue8m0(0.3f, M::kFloor), 125);  // 0.25
}

// ---- randomized brute-force comparison ----------------------------------------------------------

void check_random(const Fmt& f, const std::vector<float>& xs) {
  const RefEncoder ref(f);
  int bad = 0;
  for (float x : xs) {
    const int64_t want = ref(x);
    const uint32_t got = f.encode(x);
    const bool ok = want < 0 ? is_nan_code(got, f) && bool(got & sign_bit(f)) == std::signbit(x) : got == uint32_t(want);
    if (!ok && ++bad <= 10)
      ADD_FAILURE() << f.name << ": x=" << x << " (bits 0x" << std::hex << dc::float_bits(x) << ") got 0x" << got
                    << " want 0x" << want;
  }
  EXPECT_EQ(bad, 0) << f.name << ": " << bad << " mismatches out of " << xs.size();
}

TEST(ConvertRandom, Bf16MatchesBruteForceOnAllBitPatterns) {
  std::mt19937_64 g(12345);
  std::vector<float> xs;
  xs.reserve(4'000'000);
  while (xs.size() < 4'000'000) xs.push_back(fbits(uint32_t(g())));  // every class: NaN, inf, subnormal, ...
  check_random(kBF16, xs);
}

TEST(ConvertRandom, Bf16MatchesBruteForceNearTies) {
  // Bit patterns whose low 16 bits sit at or next to the rounding boundary 0x8000.
  std::mt19937 g(7);
  std::vector<float> xs;
  for (int i = 0; i < 200'000; ++i) {
    const uint32_t hi = g() & 0xFFFF0000u;
    for (uint32_t lo : {0x7FFFu, 0x8000u, 0x8001u, 0x0000u, 0xFFFFu}) xs.push_back(fbits(hi | lo));
  }
  check_random(kBF16, xs);
}

// Random floats spread over the format's exponent range (plus a few binades beyond on each side).
std::vector<float> spread(const Fmt& f, size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  const int e_lo = 1 - f.bias - f.m_bits - 3, e_hi = (1 << f.e_bits) - f.bias + 1;
  std::uniform_int_distribution<int> ed(e_lo, e_hi);
  std::vector<float> xs;
  xs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t exp_field = uint32_t(ed(g) + 127), mant = g() & 0x7FFFFFu, sign = g() & 0x80000000u;
    // Half of the samples sit exactly at, or one float ulp next to, a tie of the target format's
    // normal range: keep the format's mantissa bits, set the first dropped bit, nudge by -1/0/+1.
    uint32_t m = mant;
    if (i % 2) {
      const int drop = 23 - f.m_bits;
      m = ((mant >> drop) << drop) | (1u << (drop - 1));
      m = (m + (g() % 3) - 1) & 0x7FFFFFu;
    }
    xs.push_back(fbits(sign | (exp_field << 23) | m));
  }
  return xs;
}

TEST(ConvertRandom, MiniFormatsMatchBruteForce) {
  for (const Fmt* f : {&kFP16, &kE4M3, &kE5M2, &kE2M1}) {
    auto xs = spread(*f, 1'000'000, 99u + uint32_t(f->m_bits));
    for (float s : {0.0f, -0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, fbits(1), fbits(0x80000001u),
                    std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()})
      xs.push_back(s);
    check_random(*f, xs);
  }
}

// The reference itself: spot-check it on hand-computed values so the tests above mean something.
TEST(ConvertRandom, ReferenceEncoderSanity) {
  const RefEncoder fp16(kFP16), e2m1(kE2M1), e4m3(kE4M3);
  EXPECT_EQ(fp16(1.0f), 0x3C00);
  EXPECT_EQ(fp16(-2.0f), 0xC000);
  EXPECT_EQ(fp16(65520.0f), 0x7C00);
  EXPECT_EQ(fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(e2m1(5.0f), 0x6);
  EXPECT_EQ(e2m1(1e9f), 0x7);
  EXPECT_EQ(e4m3(470.0f), 0x7E);
  EXPECT_EQ(e4m3(-std::numeric_limits<float>::quiet_NaN()), -1);
  EXPECT_DOUBLE_EQ(virtual_next_after_max(kFP16), 65536.0);
  EXPECT_DOUBLE_EQ(virtual_next_after_max(kE4M3), 480.0);
  EXPECT_DOUBLE_EQ(virtual_next_after_max(kE2M1), 8.0);
  EXPECT_DOUBLE_EQ(virtual_next_after_max(kBF16), std::ldexp(1.0, 128));
}

}  // namespace

// The bit-manipulation E4M3 encoder against the generic one over a sweep of all float bit patterns.
TEST(ConvertEncode, E4M3FastPathEqualsGenericEncoder) {
  constexpr uint64_t kStride = 4099;  // odd and prime: visits every exponent and many mantissas
  int bad = 0;
  for (uint64_t u = 0; u < (1ull << 32) && bad < 10; u += kStride) {
    const float x = fbits(uint32_t(u));
    const uint32_t want = dc::minifloat_encode(x, dc::kE4M3Format), got = dc::float_to_e4m3(x);
    if (want != got) {
      ++bad;
      ADD_FAILURE() << "bits 0x" << std::hex << u << ": fast " << got << ", generic " << want;
    }
  }
}
