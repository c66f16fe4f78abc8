// The NPU instruction model's SwiGLU micro-ops (npu_model/vector.hpp, vector_math.cpp) on the AscendC
// documentation (docs/zh/api/SIMD-API/基础API/Reg矢量计算/): Exp, Abs, Div, Maxs / Mins, ReduceMax, the
// block-stride LoadAlign (vsldb), the f32 -> e4m3 Cast and the PACK4_B32 / FIRST_ELEMENT_B32 stores; the FP4
// widening's UNPACK4_B8 LoadAlign, fp4x2 e2m1 -> bf16 Cast and Or.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_test_util.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;
using namespace dga_vector_test;

namespace {

nm::Vreg ramp(float start, float step) {
  nm::Vreg r;
  for (size_t i = 0; i < kF32PerReg; ++i) r.set<float>(i, start + step * float(i));
  return r;
}

TEST(NpuModelVectorMath, ExpAbsDivMinMaxPerActiveElementInactiveZero) {
  nm::VectorCore vc;
  const uint16_t m = first(vc, 40);
  const nm::Vreg x = ramp(-3.1f, 0.17f), y = ramp(0.5f, 0.25f);
  nm::Vreg e = poisoned(), a = poisoned(), d = poisoned(), hi = poisoned(), lo = poisoned();
  vc.vexp(e, x, m, nm::Merge::kZeroing);
  vc.vabs(a, x, m, nm::Merge::kZeroing);
  vc.vdiv(d, x, y, m, nm::Merge::kZeroing);
  vc.vmaxs(hi, x, 0.25f, m, nm::Merge::kZeroing);
  vc.vmins(lo, x, 0.25f, m, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) {
    const float v = x.get<float>(i), w = y.get<float>(i);
    const bool on = i < 40;
    EXPECT_EQ(e.get<float>(i), on ? std::exp(v) : 0.0f) << i;
    EXPECT_EQ(a.get<float>(i), on ? std::fabs(v) : 0.0f) << i;
    EXPECT_EQ(d.get<float>(i), on ? v / w : 0.0f) << i;
    EXPECT_EQ(hi.get<float>(i), on ? std::max(v, 0.25f) : 0.0f) << i;
    EXPECT_EQ(lo.get<float>(i), on ? std::min(v, 0.25f) : 0.0f) << i;
  }
}

TEST(NpuModelVectorMath, NanStaysVisibleInMaxsMinsAndReduceMax) {
  nm::VectorCore vc;
  const uint16_t all = vc.pset_b32(nm::Pattern::kAll);
  nm::Vreg x = ramp(-1.0f, 0.5f), out;
  x.set<float>(3, kNaN);
  vc.vmaxs(out, x, 0.0f, all, nm::Merge::kZeroing);
  EXPECT_TRUE(std::isnan(out.get<float>(3)));
  vc.vmins(out, x, 0.0f, all, nm::Merge::kZeroing);
  EXPECT_TRUE(std::isnan(out.get<float>(3)));
  vc.vcmax(out, x, all, nm::Merge::kZeroing);
  EXPECT_TRUE(std::isnan(out.get<float>(0)));
  EXPECT_THROW(vc.vmaxs(out, x, 0.0f, all, nm::Merge::kMerging), core::Error);
}

TEST(NpuModelVectorMath, ReduceMaxTakesActiveElementsIntoElementZero) {
  nm::VectorCore vc;
  nm::Vreg x = ramp(-10.0f, 1.0f), out = poisoned();  // the largest active one: element 31
  x.set<float>(50, 1000.0f);                              // inactive
  vc.vcmax(out, x, first(vc, 32), nm::Merge::kZeroing);
  EXPECT_EQ(out.get<float>(0), 21.0f);
  for (size_t i = 1; i < kF32PerReg; ++i) EXPECT_EQ(out.get<float>(i), 0.0f) << i;
  x.set<float>(0, kInf);
  vc.vcmax(out, x, first(vc, 1), nm::Merge::kZeroing);
  EXPECT_EQ(out.get<float>(0), kInf);
  EXPECT_THROW(vc.vcmax(out, x, first(vc, 0), nm::Merge::kZeroing), core::Error);
}

TEST(NpuModelVectorMath, BlockStrideLoadReadsEveryStrideThBlockAndZeroesMaskedOutBlocks) {
  nm::VectorCore vc;
  std::vector<float> ub(8 * 64);
  for (size_t i = 0; i < ub.size(); ++i) ub[i] = float(i);
  const auto* src = reinterpret_cast<const uint8_t*>(ub.data());
  nm::Vreg out = poisoned();
  vc.vsldb(out, src, 2, vc.pset_b32(nm::Pattern::kAll), nm::Width::kB32);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(out.get<float>(i), float((i / 8) * 16 + i % 8)) << i;
  out = poisoned();
  vc.vsldb(out, src, 3, first(vc, 17), nm::Width::kB32);  // blocks 0-2 have an active element
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(out.get<float>(i), i < 24 ? float((i / 8) * 24 + i % 8) : 0.0f) << i;
  out = poisoned();
  vc.vsldb(out, src + 32, 0, first(vc, 64), nm::Width::kB32);  // stride 0: the first block repeated
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(out.get<float>(i), float(8 + i % 8)) << i;
}

TEST(NpuModelVectorMath, E4m3CastRoundsSaturatesAndPlacesTheByte) {
  nm::VectorCore vc;
  vc.set_ctrl(0);  // CTRL[60] = 0: the instruction's saturation operand decides
  nm::Vreg x = ramp(-20.0f, 0.7f), out;
  x.set<float>(0, 460.0f), x.set<float>(1, -1e9f), x.set<float>(2, kNaN), x.set<float>(3, kInf), x.set<float>(4, 0.0013f);
  const uint16_t m = first(vc, 60);
  vc.vcvt_f322e4m3(out, x, m, nm::Round::kRint, nm::Sat::kEnable, nm::Part4::kP2, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i)
    for (size_t b = 0; b < 4; ++b) {
      const uint8_t want = (b == 2 && i < 60 && i != 2) ? core::float_to_e4m3(x.get<float>(i)) : 0;
      EXPECT_EQ(out.get<uint8_t>(4 * i + b), want) << i << " " << b;
    }
  EXPECT_EQ(out.get<uint8_t>(2), 0x7E);   // 460 saturates to 448
  EXPECT_EQ(out.get<uint8_t>(6), 0xFE);   // -1e9 to -448
  EXPECT_EQ(out.get<uint8_t>(10), 0x00);  // NaN saturates to 0 (CTRL[50] = 0, its reset value)
  vc.set_ctrl(uint64_t(1) << 50);         // CTRL[50] = 1: a saturating cast keeps NaN
  vc.vcvt_f322e4m3(out, x, m, nm::Round::kRint, nm::Sat::kEnable, nm::Part4::kP2, nm::Merge::kZeroing);
  EXPECT_EQ(out.get<uint8_t>(10), 0x7F);
  EXPECT_EQ(out.get<uint8_t>(2), 0x7E);
  vc.set_ctrl(0);
  vc.vcvt_f322e4m3(out, x, m, nm::Round::kRint, nm::Sat::kDisable, nm::Part4::kP0, nm::Merge::kZeroing);
  EXPECT_EQ(out.get<uint8_t>(0), 0x7E);   // 460 rounds to 448
  EXPECT_EQ(out.get<uint8_t>(4), 0xFF);   // overflow: NaN (no infinity in e4m3fn)
  EXPECT_EQ(out.get<uint8_t>(12), 0x7F);  // inf: NaN
  EXPECT_THROW(vc.vcvt_f322e4m3(out, x, m, nm::Round::kFloor, nm::Sat::kEnable, nm::Part4::kP0, nm::Merge::kZeroing),
               core::Error);
}

TEST(NpuModelVectorMath, Pack4StoreWritesLowBytesAndFirstElementStoreOneWord) {
  nm::VectorCore vc;
  nm::Vreg x;
  for (size_t i = 0; i < kF32PerReg; ++i) x.set<uint32_t>(i, 0xA0B0C000u + uint32_t(i));
  std::array<uint8_t, 80> mem{};
  mem.fill(0x55);
  vc.vsts(x, mem.data(), nm::StoreDist::kPack4B32, first(vc, 40), nullptr);
  for (size_t i = 0; i < mem.size(); ++i) EXPECT_EQ(mem[i], i < 40 ? uint8_t(i) : 0x55) << i;
  mem.fill(0x55);
  vc.vsts(x, mem.data(), nm::StoreDist::kFirstB32, vc.pset_b32(nm::Pattern::kAll), nullptr);
  uint32_t w;
  std::memcpy(&w, mem.data(), sizeof w);
  EXPECT_EQ(w, 0xA0B0C000u);
  EXPECT_EQ(mem[4], 0x55);
}

// The 16 e2m1 codes (OCP MX: sign, 2 exponent bits, 1 mantissa bit) as values, written out.
constexpr std::array<float, 16> kE2M1Values = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                              -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

TEST(NpuModelVectorMath, Unpack4LoadSpreadsEachByteOverFour) {
  nm::VectorCore vc;
  std::vector<uint8_t> ub(nm::kVregBytes);
  for (size_t i = 0; i < ub.size(); ++i) ub[i] = uint8_t(0x80 + i);
  nm::Vreg r;
  nm::Accesses acc;
  vc.vlds(r, ub.data(), nm::LoadDist::kUnpack4B8, &acc);
  for (size_t b = 0; b < nm::kVregBytes; ++b) EXPECT_EQ(r.get<uint8_t>(b), b % 4 == 0 ? ub[b / 4] : 0) << b;
  size_t read = 0;
  for (const nm::Run& run : acc) read += run.bytes;
  EXPECT_EQ(read, nm::kVregBytes / 4);  // VL / 4 bytes, not VL
}

TEST(NpuModelVectorMath, E2m1CastWidensBothNibblesOfThePartsByte) {
  nm::VectorCore vc;
  nm::Vreg src;
  for (size_t j = 0; j < kF32PerReg; ++j) {
    src.set<uint8_t>(4 * j, uint8_t((j % 16) | ((15 - j % 16) << 4)));  // low nibble j % 16, high 15 - j % 16
    src.set<uint8_t>(4 * j + 1, uint8_t(((j + 3) % 16) | (((j + 7) % 16) << 4)));
  }
  uint32_t n = 2 * 50;  // a b16 mask of 100 elements: bits 4 j set for pairs j < 50
  const uint16_t m = vc.plt_b16(n, nm::Post::kUpdate);
  nm::Vreg p0, p1;
  vc.vcvt_e2m12bf16(p0, src, m, nm::Part4::kP0, nm::Merge::kZeroing);
  for (size_t j = 0; j < kF32PerReg; ++j) {
    const bool on = j < 50;
    const auto bf = [](float v) { return core::float_to_bf16(v); };
    EXPECT_EQ(p0.get<uint16_t>(2 * j), on ? bf(kE2M1Values[j % 16]) : 0) << j;
    EXPECT_EQ(p0.get<uint16_t>(2 * j + 1), on ? bf(kE2M1Values[15 - j % 16]) : 0) << j;
  }
  // Part P1 reads byte 4 j + 1, selected by bit 4 j + 1: a b16 mask sets only even bits, so nothing converts.
  vc.vcvt_e2m12bf16(p1, src, m, nm::Part4::kP1, nm::Merge::kZeroing);
  for (size_t b = 0; b < nm::kVregBytes; ++b) EXPECT_EQ(p1.get<uint8_t>(b), 0) << b;
  EXPECT_THROW(vc.vcvt_e2m12bf16(p0, src, m, nm::Part4::kP0, nm::Merge::kMerging), core::Error);
}

TEST(NpuModelVectorMath, OrPerActiveElementOfItsWidth) {
  nm::VectorCore vc;
  nm::Vreg a, b, out;
  for (size_t i = 0; i < nm::kVregBytes; ++i) a.set<uint8_t>(i, uint8_t(i)), b.set<uint8_t>(i, uint8_t(0x40 | (i >> 2)));
  vc.vor(out, a, b, first(vc, 20), nm::Width::kB32, nm::Merge::kZeroing);
  for (size_t i = 0; i < nm::kVregBytes; ++i)
    EXPECT_EQ(out.get<uint8_t>(i), i < 80 ? uint8_t(a.get<uint8_t>(i) | b.get<uint8_t>(i)) : 0) << i;
  uint32_t n = 7;
  vc.vor(out, a, b, vc.plt_b16(n, nm::Post::kUpdate), nm::Width::kB16, nm::Merge::kZeroing);
  for (size_t i = 0; i < nm::kVregBytes; ++i)
    EXPECT_EQ(out.get<uint8_t>(i), i < 14 ? uint8_t(a.get<uint8_t>(i) | b.get<uint8_t>(i)) : 0) << i;
}

// The FP4 -> e4m3 widening of npu_convert.hpp, micro-op by micro-op: 64 packed bytes become 128 e4m3 bytes in
// order (element 2 i the low nibble of byte i), each the exact e2m1 value.
TEST(NpuModelVectorMath, Fp4ToE4m3ChainIsExactAndInOrder) {
  nm::VectorCore vc;
  std::vector<uint8_t> packed(nm::kVregBytes), wide(nm::kVregBytes, 0x55);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = uint8_t((i * 37 + 11) & 0xFF);
  uint32_t values = 128, pairs = 64;
  const uint16_t mh = vc.plt_b16(values, nm::Post::kUpdate), m32 = vc.plt_b32(pairs, nm::Post::kUpdate);
  nm::Vreg x, h, lo, hi, a, b;
  vc.vlds(x, packed.data(), nm::LoadDist::kUnpack4B8);
  vc.vcvt_e2m12bf16(h, x, mh, nm::Part4::kP0, nm::Merge::kZeroing);
  vc.vcvt_bf162f32(lo, h, mh, nm::Part::kEven, nm::Merge::kZeroing);
  vc.vcvt_bf162f32(hi, h, mh, nm::Part::kOdd, nm::Merge::kZeroing);
  vc.vcvt_f322e4m3(a, lo, m32, nm::Round::kRint, nm::Sat::kEnable, nm::Part4::kP0, nm::Merge::kZeroing);
  vc.vcvt_f322e4m3(b, hi, m32, nm::Round::kRint, nm::Sat::kEnable, nm::Part4::kP1, nm::Merge::kZeroing);
  vc.vor(a, a, b, m32, nm::Width::kB32, nm::Merge::kZeroing);
  vc.vsts(a, wide.data(), nm::StoreDist::kPackB32, m32, nullptr);
  for (size_t e = 0; e < 128; ++e) {
    const uint8_t code = uint8_t((packed[e / 2] >> (4 * (e % 2))) & 0xF);
    EXPECT_EQ(wide[e], core::float_to_e4m3(kE2M1Values[code])) << e;
  }
  EXPECT_EQ(wide[128], 0x55);
}

}  // namespace
