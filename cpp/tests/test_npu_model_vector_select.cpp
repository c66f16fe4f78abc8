// The NPU instruction model's epilogue micro-ops (npu_model/vector.hpp, vector_select.cpp) on the AscendC
// documentation (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/Reg矢量计算/, R below; C = the C-API pages
// docs/zh/api/SIMD-API/C-API/reg/): Relu (vrelu), Muls / Adds (vmuls / vadds), Arange (vci), Compares (vcmps_*),
// Select (vsel) and MaskAnd / MaskOr / MaskNot (pand / por / pnot), with the operands the devkit's dav_3510
// implementations pass (ReluImpl, MulsImpl, AddsImpl, ArangeImpl, CompareScalarImpl, SelectImpl, Mask*Impl).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_test_util.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;
using namespace dga_vector_test;

namespace {

// The b32 elements a predicate makes active (their lowest bits), and whether any other bit is set.
std::vector<bool> lanes(const nm::VectorCore& vc, uint16_t p) {
  std::vector<bool> on(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) on[i] = vc.pred(p).test(4 * i);
  return on;
}
bool only_lowest_bits(const nm::VectorCore& vc, uint16_t p) {
  for (size_t k = 0; k < nm::kPregBits; ++k)
    if (k % 4 != 0 && vc.pred(p).test(k)) return false;
  return true;
}

}  // namespace

// R基础算术/Relu.md (dstReg_i = max(0, srcReg_i), ZEROING only) and C reg/arithmetic_compute/asc_relu.md (the same
// vrelu: dst_i = (src_i >= 0) ? src_i : 0): -0.0 >= 0 holds, so -0.0 stays -0.0; NaN >= 0 does not, so NaN -> +0
// (the model's reading: neither page names NaN); subnormals and infinities pass or clear by sign.
TEST(NpuModelVectorRelu, ValuesSignedZeroAndNaN) {
  const float sub = std::numeric_limits<float>::denorm_min();
  const std::vector<float> in = {1.5f, -1.5f, 0.0f, -0.0f, kNaN, -kNaN, kInf, -kInf, sub, -sub, 3e38f, -3e38f};
  nm::VectorCore vc;
  nm::Vreg d = poisoned();
  vc.vrelu(d, reg_of(in), vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  const std::vector<float> want = {1.5f, 0.0f, 0.0f, -0.0f, 0.0f, 0.0f, kInf, 0.0f, sub, 0.0f, 3e38f, 0.0f};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(d.get<float>(i), want[i]) << i;
    EXPECT_EQ(std::signbit(d.get<float>(i)), std::signbit(want[i])) << i;
  }
  for (size_t i = want.size(); i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), 0.0f) << i;  // source 0
}

// Relu.md: ZEROING (mask未筛选的元素在dstReg中置零); MERGING is not supported (refused).
TEST(NpuModelVectorRelu, MaskAndMerge) {
  nm::VectorCore vc;
  std::vector<float> x(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) x[i] = float(i) - 3.0f;
  nm::Vreg d = poisoned();
  vc.vrelu(d, reg_of(x), first(vc, 10), nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 10 && i > 3 ? x[i] : 0.0f) << i;
  d = reg_of(x);  // dst may be the source
  vc.vrelu(d, d, vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), std::max(x[i], 0.0f)) << i;
  expect_error([&] { vc.vrelu(d, d, first(vc, 3), nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
}

// R基础算术/Muls.md (dstReg_i = srcReg_i * scalarValue) and Adds.md (dstReg_i = srcReg_i + scalarValue), float:
// one fp32 rounding to nearest even, shown on exact ties; inf and NaN as IEEE; ZEROING only.
TEST(NpuModelVectorScalar, MulsAndAddsRounding) {
  nm::VectorCore vc;
  const uint16_t all = vc.pset_b32(nm::Pattern::kAll);
  const float a = 1.0f + ulps(-12);
  nm::Vreg d;
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 -> 1 + 2^-11 (tie, even below); 0 * inf = NaN; 2^100 * 2^100 -> inf.
  vc.vmuls(d, reg_of<float>({a, kInf, ulps(100), -1.5f, -0.0f}), a, all, nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), 1.0f + ulps(-11));
  EXPECT_EQ(d.get<float>(1), kInf);
  EXPECT_EQ(d.get<float>(2), ulps(100) * a);
  EXPECT_EQ(d.get<float>(3), -1.5f * a);
  EXPECT_TRUE(std::signbit(d.get<float>(4)));
  vc.vmuls(d, reg_of<float>({kInf, ulps(100), 2.0f}), 0.0f, all, nm::Merge::kZeroing);
  EXPECT_TRUE(std::isnan(d.get<float>(0)));
  EXPECT_EQ(d.get<float>(1), 0.0f);
  vc.vmuls(d, reg_of<float>({ulps(100)}), ulps(100), all, nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), kInf);
  // 1 + 2^-24 -> 1 (tie, even below); (1 + 2^-23) + 2^-24 -> 1 + 2^-22 (tie, even above); inf - inf = NaN.
  vc.vadds(d, reg_of<float>({1.0f, 1.0f + ulps(-23), -kInf, 3.0f}), ulps(-24), all, nm::Merge::kZeroing);
  EXPECT_EQ(d.get<float>(0), 1.0f);
  EXPECT_EQ(d.get<float>(1), 1.0f + ulps(-22));
  EXPECT_EQ(d.get<float>(2), -kInf);
  EXPECT_EQ(d.get<float>(3), 3.0f);
  vc.vadds(d, reg_of<float>({-kInf}), kInf, all, nm::Merge::kZeroing);
  EXPECT_TRUE(std::isnan(d.get<float>(0)));
}

// Muls.md / Adds.md: inactive elements 0 (ZEROING); MERGING is not supported (refused); dst may be the source.
TEST(NpuModelVectorScalar, MasksAndMerge) {
  nm::VectorCore vc;
  std::vector<float> x(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) x[i] = float(i) * 0.75f - 7.0f;
  const uint16_t seven = first(vc, 7);
  nm::Vreg d = poisoned();
  vc.vmuls(d, reg_of(x), -2.5f, seven, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 7 ? x[i] * -2.5f : 0.0f) << i;
  d = poisoned();
  vc.vadds(d, reg_of(x), 0.125f, seven, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 7 ? x[i] + 0.125f : 0.0f) << i;
  d = reg_of(x);
  vc.vadds(d, d, 1.0f, vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  vc.vmuls(d, d, 2.0f, vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), (x[i] + 1.0f) * 2.0f) << i;
  expect_error([&] { vc.vmuls(d, d, 2.0f, seven, nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
  expect_error([&] { vc.vadds(d, d, 2.0f, seven, nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
}

// R索引操作/Arange.md and C reg/index_operate/asc_arange.md: increasing {v, v + 1, .., v + VL_T - 1}, decreasing
// {v + VL_T - 1, .., v}; int32 wraps past the type's bound (Arange.md 约束说明); every element written.
TEST(NpuModelVectorArange, Int32) {
  nm::VectorCore vc;
  nm::Vreg d = poisoned();
  vc.vci_s32(d, -5, nm::Order::kIncrease);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<int32_t>(i), int32_t(i) - 5) << i;
  vc.vci_s32(d, 10, nm::Order::kDecrease);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<int32_t>(i), 10 + 63 - int32_t(i)) << i;
  const int32_t max = std::numeric_limits<int32_t>::max();
  vc.vci_s32(d, max - 1, nm::Order::kIncrease);
  EXPECT_EQ(d.get<int32_t>(1), max);
  EXPECT_EQ(d.get<int32_t>(2), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(d.get<int32_t>(3), std::numeric_limits<int32_t>::min() + 1);
}

// Arange.md for float: start + i; the model rounds the exact value once (nearest even): from 2^24, 2^24 + 1
// -> 2^24 and 2^24 + 3 -> 2^24 + 4 (ties), 2^24 + 2 exact.
TEST(NpuModelVectorArange, Float) {
  nm::VectorCore vc;
  nm::Vreg d;
  vc.vci_f32(d, -3.5f, nm::Order::kIncrease);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), float(i) - 3.5f) << i;
  vc.vci_f32(d, 0.0f, nm::Order::kDecrease);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), float(63 - i)) << i;
  vc.vci_f32(d, ulps(24), nm::Order::kIncrease);
  EXPECT_EQ(d.get<float>(1), ulps(24));
  EXPECT_EQ(d.get<float>(2), ulps(24) + 2.0f);
  EXPECT_EQ(d.get<float>(3), ulps(24) + 4.0f);
}

// R比较与选择/Compares.md (dst bit 1 when src_i cmp scalar holds; 未选中元素置零) and C compare_and_select/
// asc_{eq,ne,gt,ge,lt,le}_scalar.md, int32 (signed): one result per b32 element in its lowest predicate bit
// (MaskReg.md), so an all-true result is CreateMask<int32_t>()'s predicate.
TEST(NpuModelVectorCompare, Int32AllModes) {
  nm::VectorCore vc;
  std::vector<int32_t> x(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) x[i] = int32_t(i) - 32;  // -32 .. 31
  const nm::Vreg src = reg_of(x);
  const uint16_t all = vc.pset_b32(nm::Pattern::kAll);
  const std::vector<std::pair<nm::Cmp, std::function<bool(int32_t)>>> modes = {
      {nm::Cmp::kEq, [](int32_t v) { return v == -3; }}, {nm::Cmp::kNe, [](int32_t v) { return v != -3; }},
      {nm::Cmp::kGt, [](int32_t v) { return v > -3; }},  {nm::Cmp::kGe, [](int32_t v) { return v >= -3; }},
      {nm::Cmp::kLt, [](int32_t v) { return v < -3; }},  {nm::Cmp::kLe, [](int32_t v) { return v <= -3; }}};
  for (const auto& [cmp, want] : modes) {
    const uint16_t p = vc.vcmps_s32(src, -3, cmp, all);
    EXPECT_TRUE(only_lowest_bits(vc, p));
    const std::vector<bool> on = lanes(vc, p);
    for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(on[i], want(x[i])) << int(cmp) << " / " << i;
  }
  EXPECT_EQ(vc.vcmps_s32(src, 100, nm::Cmp::kLt, all), all);  // all true: the same predicate value, same handle
  EXPECT_EQ(vc.vcmps_s32(src, 100, nm::Cmp::kGt, all), 0);    // none: the all-off predicate
  // Inactive elements are false: under UpdateMask(40), GE -3 holds for elements [29, 40) only.
  const std::vector<bool> on = lanes(vc, vc.vcmps_s32(src, -3, nm::Cmp::kGe, first(vc, 40)));
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(on[i], i >= 29 && i < 40) << i;
}

// Compares.md, float: IEEE comparisons; -0.0 == +0.0; a NaN element compares false except NE (the documentation
// is silent on NaN: the model's choice); infinities order.
TEST(NpuModelVectorCompare, FloatSpecials) {
  nm::VectorCore vc;
  const nm::Vreg src = reg_of<float>({-0.0f, 0.0f, kNaN, kInf, -kInf, 1e-45f, -1e-45f, 2.5f});
  const uint16_t eight = first(vc, 8);
  auto bits = [&](nm::Cmp cmp, float s) {
    const std::vector<bool> on = lanes(vc, vc.vcmps_f32(src, s, cmp, eight));
    return std::vector<bool>(on.begin(), on.begin() + 9);
  };
  using B = std::vector<bool>;
  EXPECT_EQ(bits(nm::Cmp::kEq, 0.0f), (B{1, 1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bits(nm::Cmp::kNe, 0.0f), (B{0, 0, 1, 1, 1, 1, 1, 1, 0}));  // element 8: inactive, false
  EXPECT_EQ(bits(nm::Cmp::kGe, -0.0f), (B{1, 1, 0, 1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(bits(nm::Cmp::kLt, 0.0f), (B{0, 0, 0, 0, 1, 0, 1, 0, 0}));
  EXPECT_EQ(bits(nm::Cmp::kLe, kInf), (B{1, 1, 0, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(bits(nm::Cmp::kGt, kNaN), (B{0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bits(nm::Cmp::kNe, kNaN), (B{1, 1, 1, 1, 1, 1, 1, 1, 0}));
}

// R比较与选择/Select.md and C compare_and_select/asc_select.md: a set mask bit takes srcReg0, a clear one srcReg1,
// for every element (未选中的元素保持源操作数的值而非清零); the bits as copied (NaN payloads, -0.0).
TEST(NpuModelVectorSelect, TakesSrc0WhereSet) {
  nm::VectorCore vc;
  std::vector<float> x(kF32PerReg), y(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) x[i] = float(i), y[i] = -float(i) - 0.5f;
  x[1] = -0.0f;
  nm::Vreg a = reg_of(x);
  a.set<uint32_t>(2, 0x7FC01234u);  // a NaN with a payload
  const nm::Vreg b = reg_of(y);
  std::vector<int32_t> idx(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) idx[i] = int32_t(i);
  const uint16_t small = vc.vcmps_s32(reg_of(idx), 5, nm::Cmp::kLt, vc.pset_b32(nm::Pattern::kAll));
  nm::Vreg d = poisoned();
  vc.vsel_b32(d, a, b, small);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<uint32_t>(i), (i < 5 ? a : b).get<uint32_t>(i)) << i;
  EXPECT_TRUE(std::signbit(d.get<float>(1)));
  d = a;  // dst may be a source
  vc.vsel_b32(d, b, d, 0);  // the all-off predicate: every element from src1
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<uint32_t>(i), a.get<uint32_t>(i)) << i;
}

// R逻辑计算/And.md, Or.md, Not.md (MaskReg forms; C logic_compute/asc_and.md: 根据mask对src0，src1的有效bit进行逻辑与):
// bitwise over the predicate, the bits the mask leaves out 0; the results are interned (equal values, equal
// handles).
TEST(NpuModelVectorMaskLogic, AndOrNot) {
  nm::VectorCore vc;
  std::vector<int32_t> idx(kF32PerReg);
  for (size_t i = 0; i < kF32PerReg; ++i) idx[i] = int32_t(i);
  const nm::Vreg col = reg_of(idx);
  const uint16_t all = vc.pset_b32(nm::Pattern::kAll);
  const uint16_t ge10 = vc.vcmps_s32(col, 10, nm::Cmp::kGe, all), lt20 = vc.vcmps_s32(col, 20, nm::Cmp::kLt, all);
  const uint16_t in = vc.pand(ge10, lt20, all), out = vc.pnot(in, all), either = vc.por(ge10, lt20, all);
  for (size_t i = 0; i < kF32PerReg; ++i) {
    EXPECT_EQ(lanes(vc, in)[i], i >= 10 && i < 20) << i;
    EXPECT_EQ(lanes(vc, out)[i], i < 10 || i >= 20) << i;
  }
  EXPECT_EQ(either, all);
  EXPECT_EQ(vc.por(in, out, all), all);
  EXPECT_EQ(vc.pand(in, out, all), 0);
  EXPECT_TRUE(only_lowest_bits(vc, out));  // NOT under a b32 mask stays a b32 predicate
  // The mask limits every result: under UpdateMask(15) NOT and OR stop at element 15, AND too.
  const uint16_t m15 = first(vc, 15);
  for (size_t i = 0; i < kF32PerReg; ++i) {
    EXPECT_EQ(lanes(vc, vc.pnot(in, m15))[i], i < 10) << i;
    EXPECT_EQ(lanes(vc, vc.por(ge10, lt20, m15))[i], i < 15) << i;
    EXPECT_EQ(lanes(vc, vc.pand(ge10, lt20, m15))[i], i >= 10 && i < 15) << i;
  }
  // A b16 mask (CreateMask<half>) lets NOT set the odd-element bits between the b32 ones too (bit 2 of each).
  const uint16_t not_b16 = vc.pnot(all, vc.pset_b16(nm::Pattern::kAll));
  for (size_t k = 0; k < nm::kPregBits; ++k) EXPECT_EQ(vc.pred(not_b16).test(k), k % 4 == 2) << k;
}

// The MQA-logits epilogue on the micro-ops, one register of 64 columns starting at column c0: acc = sum_h w_h *
// relu(score_h) (Relu, Muls, Add), acc *= kv_scale (Muls), then columns outside [ks, ke) -> -inf (Arange, Adds,
// Compares GE / LT, MaskAnd, Select), against the same fp32 operations in plain C++.
TEST(NpuModelVectorSelect, MqaLogitsEpilogue) {
  nm::VectorCore vc;
  const uint16_t all = vc.pset_b32(nm::Pattern::kAll);
  constexpr int kHeads = 3, kC0 = 128, kKs = 140, kKe = 181;
  const float w[kHeads] = {0.5f, -1.25f, 2.0f}, kv_scale = 0.3f;
  std::vector<std::vector<float>> score(kHeads, std::vector<float>(kF32PerReg));
  for (int h = 0; h < kHeads; ++h)
    for (size_t j = 0; j < kF32PerReg; ++j) score[h][j] = std::sin(float(h * 64 + j)) * 4.0f;
  nm::Vreg acc, t;
  vc.vdup(acc, 0, nm::Width::kB32, all, nm::Merge::kZeroing);
  for (int h = 0; h < kHeads; ++h) {
    vc.vrelu(t, reg_of(score[h]), all, nm::Merge::kZeroing);
    vc.vmuls(t, t, w[h], all, nm::Merge::kZeroing);
    vc.vadd(acc, acc, t, all, nm::Merge::kZeroing);
  }
  vc.vmuls(acc, acc, kv_scale, all, nm::Merge::kZeroing);
  nm::Vreg col, neg_inf;
  vc.vci_s32(col, kC0, nm::Order::kIncrease);  // the columns' indices
  const uint16_t keep =
      vc.pand(vc.vcmps_s32(col, kKs, nm::Cmp::kGe, all), vc.vcmps_s32(col, kKe, nm::Cmp::kLt, all), all);
  vc.vdup(neg_inf, 0xFF800000u, nm::Width::kB32, all, nm::Merge::kZeroing);
  vc.vsel_b32(acc, acc, neg_inf, keep);
  for (size_t j = 0; j < kF32PerReg; ++j) {
    float want = 0.0f;
    for (int h = 0; h < kHeads; ++h) want += std::max(score[h][j], 0.0f) * w[h];
    want *= kv_scale;
    const int c = kC0 + int(j);
    if (c < kKs || c >= kKe) want = -kInf;
    EXPECT_EQ(acc.get<float>(j), want) << j;
  }
}
