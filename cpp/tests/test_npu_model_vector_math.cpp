// The NPU instruction model's SwiGLU micro-ops (npu_model/vector.hpp, vector_math.cpp) on the AscendC
// documentation (docs/zh/api/SIMD-API/基础API/Reg矢量计算/): Exp, Abs, Div, Maxs / Mins, ReduceMax, the
// block-stride LoadAlign (vsldb), the f32 -> e4m3 Cast and the PACK4_B32 / FIRST_ELEMENT_B32 stores.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;

namespace {

constexpr size_t kF32PerReg = nm::kVregBytes / sizeof(float);
constexpr float kPoison = -777.0f;
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

nm::Vreg ramp(float start, float step) {
  nm::Vreg r;
  for (size_t i = 0; i < kF32PerReg; ++i) r.set<float>(i, start + step * float(i));
  return r;
}
nm::Vreg poisoned() { return ramp(kPoison, 0.0f); }
uint16_t first(nm::VectorCore& vc, uint32_t n) { return vc.plt_b32(n, nm::Post::kUpdate); }

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
      const uint8_t want = (b == 2 && i < 60) ? core::float_to_e4m3(x.get<float>(i)) : 0;
      EXPECT_EQ(out.get<uint8_t>(4 * i + b), want) << i << " " << b;
    }
  EXPECT_EQ(out.get<uint8_t>(2), 0x7E);   // 460 saturates to 448
  EXPECT_EQ(out.get<uint8_t>(6), 0xFE);   // -1e9 to -448
  EXPECT_EQ(out.get<uint8_t>(10), 0x7F);  // NaN
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

}  // namespace
