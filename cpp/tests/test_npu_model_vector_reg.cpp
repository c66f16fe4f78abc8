// The NPU instruction model's register micro-ops of the Reg API (npu_model/vector.hpp) on the AscendC
// documentation (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/Reg矢量计算/, R below): LoadAlign's
// DIST_UNPACK_B16 (vlds UNPK_B16), Cast float <- bf16 (vcvt), Add / Sub / Mul / MulAddDst (vadd / vsub / vmul /
// vmula) and Reduce<SUM> (vcadd), float. The operands are those the devkit's dav_3510 implementations pass
// (DataCopyImpl, CastOperator, Add/Sub/MulOperator, MulAddDstImpl, ReduceSumImpl).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_test_util.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;
using namespace dga_vector_test;

namespace {

// reg_of for a braced list of floats.
nm::Vreg floats(const std::vector<float>& v) { return reg_of(v); }

}  // namespace

// R Reg数据搬入/连续对齐搬入（LoadAlign）.md, 表3 DIST_UNPACK_B16: src [0x0000, 0x0001, .., 0x007F, ..] -> dst
// [0x0000, 0x0000, 0x0001, 0x0000, .., 0x003F, 0x0000]: VL / 2 bytes read. DIST_NORM reads VL; US_B8 refused.
TEST(NpuModelVectorLoad, UnpackB16DocumentationExample) {
  nm::VectorCore vc;
  std::vector<uint16_t> src(kB16PerReg);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint16_t(i);
  nm::Vreg reg = poisoned();
  nm::Accesses acc;
  vc.vlds(reg, bytes(src.data()), nm::LoadDist::kUnpackB16, &acc);
  for (size_t slot = 0; slot < kB16PerReg; ++slot)
    EXPECT_EQ(reg.get<uint16_t>(slot), slot % 2 == 0 ? uint16_t(slot / 2) : 0) << "slot " << slot;
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].p, bytes(src.data()));
  EXPECT_EQ(acc[0].bytes, nm::kVregBytes / 2);
  EXPECT_FALSE(acc[0].write);

  acc.clear();
  vc.vlds(reg, bytes(src.data()), nm::LoadDist::kNorm, &acc);
  for (size_t slot = 0; slot < kB16PerReg; ++slot) EXPECT_EQ(reg.get<uint16_t>(slot), src[slot]);
  EXPECT_EQ(acc.at(0).bytes, nm::kVregBytes);
  constexpr auto kUsB8 = nm::LoadDist(6);  // LoadDist::DIST_US_B8 (not modelled)
  expect_error([&] { vc.vlds(reg, bytes(src.data()), kUsB8, nullptr); }, core::ErrorKind::kNotImplemented);
}

// R类型转换/Cast.md 表7 (bfloat16_t -> float: RegLayout ZERO / ONE, ZEROING) and 调用示例 场景1 (LoadAlign
// DIST_UNPACK_B16, then Cast under a b32 mask, RegLayout::ZERO): the widening is exact, signs, the largest
// bf16, the smallest normal, infinities and NaN carry over (fp32 outputs are unsaturated).
TEST(NpuModelVectorCast, Bf16ToFloatValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<uint16_t, float>> cases = {
      {0x3F80, 1.0f},       {0xC020, -2.5f},  {0x4049, 3.140625f}, {0x8000, -0.0f},
      {0x0080, ulps(-126)}, {0x7F7F, std::ldexp(2.0f - ulps(-7), 127)}, {0xFF80, -inf},
      {0x7F80, inf},        {0x3E00, 0.125f}, {0xC2F7, -123.5f},   {0x4380, 256.0f}};
  nm::VectorCore vc;
  std::vector<uint16_t> ub(kF32PerReg, 0x7FC0);  // the rest: NaN
  for (size_t i = 0; i < cases.size(); ++i) ub[i] = cases[i].first;
  nm::Vreg b16, f32 = poisoned();
  vc.vlds(b16, bytes(ub.data()), nm::LoadDist::kUnpackB16);
  vc.vcvt_bf162f32(f32, b16, vc.pset_b32(nm::Pattern::kAll), nm::Part::kEven, nm::Merge::kZeroing);
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(f32.get<float>(i), cases[i].second) << std::hex << cases[i].first;
    EXPECT_EQ(f32.get<uint32_t>(i), uint32_t(cases[i].first) << 16) << std::hex << cases[i].first;
  }
  EXPECT_TRUE(std::signbit(f32.get<float>(3)));
  for (size_t i = cases.size(); i < kF32PerReg; ++i) EXPECT_TRUE(std::isnan(f32.get<float>(i))) << i;
}

// R辅助数据类型/RegLayout.md, cast_b16_to_b32: dst[0:64] = src[layout:128:2], the mask selecting b16 source
// elements (one per 2 bits; Cast.md: mask会按照输入来筛选); inactive elements are 0 (ZEROING); MERGING refused.
TEST(NpuModelVectorCast, Bf16ToFloatLayoutAndMask) {
  nm::VectorCore vc;
  nm::Vreg src;
  for (size_t slot = 0; slot < kB16PerReg; ++slot) src.set<uint16_t>(slot, core::float_to_bf16(float(slot) - 50.0f));
  uint32_t ten = 10;
  const uint16_t b16_all = vc.pset_b16(nm::Pattern::kAll), b32_all = vc.pset_b32(nm::Pattern::kAll),
                 b16_ten = vc.plt_b16(ten, nm::Post::kUpdate);  // b16 elements [0, 10)
  for (nm::Part part : {nm::Part::kEven, nm::Part::kOdd}) {
    nm::Vreg d = poisoned();
    vc.vcvt_bf162f32(d, src, b16_all, part, nm::Merge::kZeroing);
    for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), float(2 * i + size_t(part)) - 50.0f) << i;
    d = poisoned();
    vc.vcvt_bf162f32(d, src, b16_ten, part, nm::Merge::kZeroing);  // source slots 2 i + part < 10: i < 5
    for (size_t i = 0; i < kF32PerReg; ++i)
      EXPECT_EQ(d.get<float>(i), i < 5 ? float(2 * i + size_t(part)) - 50.0f : 0.0f) << i;
    // A b32 mask (CreateMask<float>) sets the bit of every even b16 slot: all of ZERO, none of ONE.
    d = poisoned();
    vc.vcvt_bf162f32(d, src, b32_all, part, nm::Merge::kZeroing);
    for (size_t i = 0; i < kF32PerReg; ++i)
      EXPECT_EQ(d.get<float>(i), part == nm::Part::kEven ? float(2 * i) - 50.0f : 0.0f) << i;
  }
  nm::Vreg d;
  expect_error([&] { vc.vcvt_bf162f32(d, src, b16_all, nm::Part::kEven, nm::Merge::kMerging); },
               core::ErrorKind::kNotImplemented);
}

// R基础算术/Add.md, Sub.md, Mul.md (dstReg_i = srcReg0_i op srcReg1_i, float): one fp32 rounding to nearest
// even per element, shown on exact ties (1 + 2^-24 lies halfway between 1 and 1 + 2^-23, ..); inf and NaN
// follow IEEE (Mul.md: unsaturated; CTRL[48] governs half only, SetCtrlSpr(ISASI).md).
TEST(NpuModelVectorArith, RoundToNearestEvenTies) {
  const float inf = std::numeric_limits<float>::infinity(), max = std::numeric_limits<float>::max();
  nm::VectorCore vc;
  const uint16_t all = vc.pset_b32(nm::Pattern::kAll);
  nm::Vreg d;
  // vadd: 1 + 2^-24 -> 1 (even below); (1 + 2^-23) + 2^-24 -> 1 + 2^-22 (even above); max + max -> inf.
  vc.vadd(d, floats({1.0f, 1.0f + ulps(-23), max, inf, 3.0f}), floats({ulps(-24), ulps(-24), max, -inf, -3.0f}), all,
          nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), 1.0f);
  EXPECT_EQ(d.get<float>(1), 1.0f + ulps(-22));
  EXPECT_EQ(d.get<float>(2), inf);
  EXPECT_TRUE(std::isnan(d.get<float>(3)));
  EXPECT_EQ(d.get<float>(4), 0.0f);
  // vsub: 1 - 2^-25 -> 1 (even above); (1 + 2^-22) - 2^-24 = 1 + 3 * 2^-24 -> 1 + 2^-22; -max - max -> -inf.
  vc.vsub(d, floats({1.0f, 1.0f + ulps(-22), -max, 5.0f}), floats({ulps(-25), ulps(-24), max, 0.5f}), all,
          nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), 1.0f);
  EXPECT_EQ(d.get<float>(1), 1.0f + ulps(-22));
  EXPECT_EQ(d.get<float>(2), -inf);
  EXPECT_EQ(d.get<float>(3), 4.5f);
  // vmul: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 -> 1 + 2^-11 (even below); (1 + 2^-12)(1 + 3 * 2^-12) = 1 + 2^-10
  // + 3 * 2^-24 -> 1 + 2^-10 + 2^-22 (even above); 0 * inf -> NaN; 2^100 * 2^100 -> inf; -1.5 * 4 -> -6.
  const float a = 1.0f + ulps(-12);
  vc.vmul(d, floats({a, a, 0.0f, ulps(100), -1.5f}), floats({a, 1.0f + 3 * ulps(-12), inf, ulps(100), 4.0f}), all,
          nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), 1.0f + ulps(-11));
  EXPECT_EQ(d.get<float>(1), 1.0f + ulps(-10) + ulps(-22));
  EXPECT_TRUE(std::isnan(d.get<float>(2)));
  EXPECT_EQ(d.get<float>(3), inf);
  EXPECT_EQ(d.get<float>(4), -6.0f);
}

// R辅助数据类型/MaskMergeMode.md and Add.md / Sub.md / Mul.md: under UpdateMask(5) the inactive lanes become 0
// (ZEROING) or keep dstReg (MERGING, Add only); Sub and Mul do not support MERGING.
TEST(NpuModelVectorArith, MasksAndMergeModes) {
  nm::VectorCore vc;
  std::vector<float> x(kF32PerReg), y(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) x[i] = float(i) + 0.5f, y[i] = 2.0f - float(i);
  const nm::Vreg a = floats(x), b = floats(y);
  const uint16_t five = first(vc, 5);
  nm::Vreg d = poisoned();
  vc.vadd(d, a, b, five, nm::Merge::kMerging);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 5 ? 2.5f : kPoison) << i;
  vc.vadd(d, a, b, five, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 5 ? 2.5f : 0.0f) << i;
  d = poisoned();
  vc.vsub(d, a, b, five, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 5 ? x[i] - y[i] : 0.0f) << i;
  d = poisoned();
  vc.vmul(d, a, b, five, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 5 ? x[i] * y[i] : 0.0f) << i;
  d = a;  // dst may be a source (Mul(x, x, x, mask))
  vc.vmul(d, d, d, vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), x[i] * x[i]) << i;
  expect_error([&] { vc.vsub(d, a, b, five, nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
  expect_error([&] { vc.vmul(d, a, b, five, nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
}

// R复合计算/MulAddDst.md: dstReg = srcReg0 * srcReg1 + dstReg on active lanes, inactive ones 0 (ZEROING only); the
// product is rounded before the sum (unfused: (1 + 2^-12)^2 - 1 loses its 2^-24 term), not a FusedMulDstAdd.
TEST(NpuModelVectorArith, MulAddDstUnfusedAndMasked) {
  nm::VectorCore vc;
  const float a = 1.0f + ulps(-12);
  nm::Vreg d = floats({-1.0f, 3.0f, 0.5f});
  vc.vmula(d, floats({a, 2.0f, -4.0f}), floats({a, 0.25f, 0.5f}), first(vc, 2), nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), ulps(-11));  // fused: 2^-11 + 2^-24
  EXPECT_EQ(d.get<float>(1), 3.5f);
  for (size_t i = 2; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), 0.0f) << i;
  expect_error([&] { vc.vmula(d, d, d, first(vc, 2), nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
}

// R归约计算/Reduce.md, ReduceType::SUM: the active elements' sum into element 0 (inactive ones count as 0, an
// empty mask gives 0), the other elements 0 (ZEROING); MERGING is not supported.
TEST(NpuModelVectorReduce, SumUnderMasks) {
  nm::VectorCore vc;
  std::vector<float> v(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) v[i] = float(i + 1);
  const nm::Vreg src = floats(v);
  for (auto [count, sum] : {std::pair{64u, 2080.0f}, {37u, 703.0f}, {1u, 1.0f}, {0u, 0.0f}}) {
    nm::Vreg d = poisoned();
    vc.vcadd(d, src, first(vc, count), nm::Merge::kZeroing);
    EXPECT_EQ(d.get<float>(0), sum) << count;
    for (size_t i = 1; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), 0.0f) << count << " / " << i;
  }
  nm::Vreg d;
  expect_error([&] { vc.vcadd(d, src, first(vc, 3), nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
}

// Reduce.md, ReduceType::SUM累加顺序: a binary tree of adjacent pairs (data1 + data2, data3 + data4, .., then
// their sums), each rounded to fp32. [2^24, 1, 1, 1, 0 ..]: (2^24 + 1) -> 2^24 (tie, even), 1 + 1 = 2, then
// 2^24 + 2 exactly (a left-to-right sum would give 2^24); with UpdateMask(3) the fourth 1 counts as 0 and
// 2^24 + 1 rounds to 2^24.
TEST(NpuModelVectorReduce, BinaryTreeOrder) {
  nm::VectorCore vc;
  std::vector<float> v(kF32PerReg, 0.0f);
  v[0] = ulps(24), v[1] = v[2] = v[3] = 1.0f;
  const nm::Vreg src = floats(v);
  nm::Vreg d;
  vc.vcadd(d, src, vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), ulps(24) + 2.0f);
  vc.vcadd(d, src, first(vc, 3), nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), ulps(24));
  // [2^24, 0, 1, 1, 0 ..]: the adjacent pair (1, 1) is summed first -> 2^24 + 2; pairing lane i with lane
  // i + 32 level by level (or a left-to-right sum) would add each 1 to 2^24 alone and give 2^24.
  std::fill(v.begin(), v.end(), 0.0f);
  v[0] = ulps(24), v[2] = v[3] = 1.0f;
  vc.vcadd(d, floats(v), vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), ulps(24) + 2.0f);
}
