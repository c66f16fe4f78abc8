// The NPU instruction model's register micro-ops for an int32 epilogue (npu_model/vector.hpp) on the AscendC
// documentation (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/Reg矢量计算/, R below): LoadAlign's
// DIST_BRC_B16 / DIST_BRC_B32, Cast int32_t -> float and float -> half (vcvt), StoreAlign's DIST_PACK_B32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_test_util.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;
using namespace dga_vector_test;

// A named namespace around the whole file: the unity test build joins this file with others.
namespace vector_int_test {
constexpr auto kRint = nm::Round::kRint, kRound = nm::Round::kRound, kFloor = nm::Round::kFloor,
               kCeil = nm::Round::kCeil, kTrunc = nm::Round::kTrunc;
constexpr uint16_t kPoison16 = 0xDEAD;

float s32_to_f32(int32_t v, nm::Round r) {
  nm::VectorCore vc;
  nm::Vreg src = reg_of(std::vector<int32_t>{v}), dst = poisoned();
  vc.vcvt_s322f32(dst, src, first(vc, 1), r, nm::Merge::kZeroing);
  return dst.get<float>(0);
}

// R Reg数据搬入/连续对齐搬入（LoadAlign）.md 表3: DIST_BRC_B32 / DIST_BRC_B16 move one b32 / b16 value and
// broadcast it to every element position; the load reads only that value.
TEST(NpuModelVectorLoad, BroadcastB32AndB16) {
  nm::VectorCore vc;
  const std::vector<float> src = {2.5f, -7.0f, 9.0f, 11.0f};
  nm::Vreg reg = poisoned();
  nm::Accesses acc;
  vc.vlds(reg, bytes(src.data() + 1), nm::LoadDist::kBrcB32, &acc);
  for (size_t i = 0; i < kF32PerReg; ++i) ASSERT_EQ(reg.get<float>(i), -7.0f) << i;
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].p, bytes(src.data() + 1));
  EXPECT_EQ(acc[0].bytes, 4u);
  EXPECT_FALSE(acc[0].write);

  const std::vector<uint16_t> h = {0x3C00, 0xC500};
  acc.clear();
  vc.vlds(reg, bytes(h.data() + 1), nm::LoadDist::kBrcB16, &acc);
  for (size_t i = 0; i < kB16PerReg; ++i) ASSERT_EQ(reg.get<uint16_t>(i), 0xC500) << i;
  EXPECT_EQ(acc.at(0).bytes, 2u);
}

// R类型转换/Cast.md 表8 (int32_t -> float: RINT, ROUND, FLOOR, CEIL, TRUNC) with RoundMode.md's rules:
// exact values stay, 2^24 + 1 (a tie between 2^24 and 2^24 + 2) and 2^24 + 3 (a tie between 2^24 + 2 and
// 2^24 + 4), their negations, INT32_MIN and INT32_MAX (rounds to 2^31 under RINT).
TEST(NpuModelVectorCast, Int32ToFloatRoundings) {
  constexpr int32_t k24 = 1 << 24;
  for (nm::Round r : {kRint, kRound, kFloor, kCeil, kTrunc}) {
    EXPECT_EQ(s32_to_f32(0, r), 0.0f);
    EXPECT_EQ(s32_to_f32(-123456, r), -123456.0f);
    EXPECT_EQ(s32_to_f32(INT32_MIN, r), -2147483648.0f);
  }
  const float p24 = 16777216.0f, p24_2 = 16777218.0f, p24_4 = 16777220.0f;
  EXPECT_EQ(s32_to_f32(k24 + 1, kRint), p24);    // tie, to even
  EXPECT_EQ(s32_to_f32(k24 + 3, kRint), p24_4);  // tie, to even
  EXPECT_EQ(s32_to_f32(k24 + 1, kRound), p24_2);  // tie, away from zero
  EXPECT_EQ(s32_to_f32(k24 + 3, kRound), p24_4);
  EXPECT_EQ(s32_to_f32(-(k24 + 1), kRound), -p24_2);
  EXPECT_EQ(s32_to_f32(k24 + 1, kFloor), p24);
  EXPECT_EQ(s32_to_f32(-(k24 + 1), kFloor), -p24_2);
  EXPECT_EQ(s32_to_f32(k24 + 1, kCeil), p24_2);
  EXPECT_EQ(s32_to_f32(-(k24 + 1), kCeil), -p24);
  EXPECT_EQ(s32_to_f32(k24 + 3, kTrunc), p24_2);
  EXPECT_EQ(s32_to_f32(-(k24 + 3), kTrunc), -p24_2);
  EXPECT_EQ(s32_to_f32(INT32_MAX, kRint), 2147483648.0f);
  EXPECT_EQ(s32_to_f32(INT32_MAX, kTrunc), 2147483520.0f);
  nm::VectorCore vc;
  nm::Vreg dst;
  expect_error([&] { vc.vcvt_s322f32(dst, dst, first(vc, 1), nm::Round::kOdd, nm::Merge::kZeroing); },
               core::ErrorKind::kNotImplemented);
  expect_error([&] { vc.vcvt_s322f32(dst, dst, first(vc, 1), kRint, nm::Merge::kMerging); },
               core::ErrorKind::kNotImplemented);
}

// Cast.md 表8's mask: active b32 elements convert, inactive ones are 0 (ZEROING).
TEST(NpuModelVectorCast, Int32ToFloatMask) {
  nm::VectorCore vc;
  std::vector<int32_t> v(kF32PerReg);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int32_t(i * 1000) - 7;
  nm::Vreg dst = poisoned();
  vc.vcvt_s322f32(dst, reg_of(v), first(vc, 37), kRint, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(dst.get<float>(i), i < 37 ? float(v[i]) : 0.0f) << i;
}

// Cast.md 表7 (float -> half: RegLayout ZERO / ONE, NO_SAT / SAT, RINT) and 表4 / 表5: a tie rounds to even,
// the part places element i in slot 2 i + part with the other slots 0; with CTRL at reset (CTRL[60] = 1,
// CTRL[48] = 0) the cast saturates (65520 -> 65504, inf -> 65504, NaN -> 0), with CTRL[48] = 1 it keeps IEEE
// results (65520 -> inf, NaN stays NaN).
TEST(NpuModelVectorCast, FloatToHalf) {
  nm::VectorCore vc;
  const std::vector<float> x = {1.0f, 1.0f + std::ldexp(1.0f, -11), -2.5f, 65520.0f, kInf, kNaN, 1e-8f};
  nm::Vreg dst = poisoned();
  vc.vcvt_f322f16(dst, reg_of(x), first(vc, uint32_t(x.size())), kRint, nm::Sat::kDisable, nm::Part::kOdd,
                  nm::Merge::kZeroing);
  const uint16_t sat[] = {0x3C00, 0x3C00, 0xC100, 0x7BFF, 0x7BFF, 0x0000, 0x0000};
  for (size_t i = 0; i < kF32PerReg; ++i) {
    EXPECT_EQ(dst.get<uint16_t>(2 * i), 0) << i;
    EXPECT_EQ(dst.get<uint16_t>(2 * i + 1), i < x.size() ? sat[i] : 0) << i;
  }
  vc.set_ctrl(vc.ctrl() | (uint64_t(1) << 48));
  vc.vcvt_f322f16(dst, reg_of(x), first(vc, uint32_t(x.size())), kRint, nm::Sat::kEnable, nm::Part::kEven,
                  nm::Merge::kZeroing);
  EXPECT_EQ(dst.get<uint16_t>(2 * 3), 0x7C00);
  EXPECT_EQ(dst.get<uint16_t>(2 * 4), 0x7C00);
  EXPECT_TRUE(std::isnan(core::fp16_to_float(dst.get<uint16_t>(2 * 5))));
  EXPECT_EQ(dst.get<uint16_t>(2 * 2 + 1), 0);
  expect_error([&] { vc.vcvt_f322f16(dst, dst, first(vc, 1), kTrunc, nm::Sat::kEnable, nm::Part::kEven,
                                     nm::Merge::kZeroing); }, core::ErrorKind::kNotImplemented);
}

// R Reg数据搬出/连续对齐搬出（StoreAlign）.md 表3 DIST_PACK_B32: the low 16 bits of each active b32 element
// stored contiguously (VL / 2 bytes at most), as CATLASS's epilogues store half results of a b32 cast.
TEST(NpuModelVectorStore, PackB32LowHalves) {
  nm::VectorCore vc;
  std::vector<uint32_t> v(kF32PerReg);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0xA0000000u + uint32_t(i) * 0x00010003u;
  std::vector<uint16_t> out(kB16PerReg, kPoison16);
  nm::Accesses acc;
  vc.vsts(reg_of(v), bytes(out.data()), nm::StoreDist::kPackB32, first(vc, 45), &acc);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], i < 45 ? uint16_t(v[i] & 0xFFFF) : kPoison16) << i;
  size_t written = 0;
  for (const nm::Run& r : acc) written += r.write ? r.bytes : 0;
  EXPECT_EQ(written, 45u * 2);
}

}  // namespace vector_int_test
