// The NPU instruction model's vector side (npu_model/vector.hpp) on worked examples of the AscendC
// documentation (cannmirror/asc-devkit, docs/zh/api/SIMD-API/; R = 基础API/Reg矢量计算/, M = 基础API/Memory矢量计算/).
// The drivers below issue the micro-ops in the order of the devkit's dav_3510 implementations
// (DuplicateFromScalarImpl, VecAxpyLevel2VFImpl, CastIntrinsicsImplVF, CopyUbufToGmAlignV2, CopyGmToUbufAlignV2).
// The Reg API's LoadAlign / Cast / Add / Sub / Mul / Reduce micro-ops: test_npu_model_vector_reg.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_test_util.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;
using namespace dga_vector_test;

namespace {

constexpr uint16_t kPoison16 = 0xDEAD;
constexpr uint8_t kPoison8 = 0xA5;
constexpr uint64_t kCtrlNoSaturation = uint64_t(1) << 48, kCtrlGlobalSaturation = uint64_t(1) << 60;

// A DataCopyPad instruction notes its UB start's rule first (checked by the access checker, hazards.hpp;
// test_npu_model_rules.cpp): removed here, where the tests count the moved runs.
void drop_start_rule(nm::Accesses& acc) {
  ASSERT_FALSE(acc.empty());
  EXPECT_NE(acc.front().rule, nullptr);
  acc.erase(acc.begin());
}

uint32_t repeats(uint32_t count, size_t per_reg) { return uint32_t((count + per_reg - 1) / per_reg); }

// Elements [0, n) of width w on, nothing else.
void expect_prefix(const nm::Pred& p, size_t n, nm::Width w) {
  for (size_t bit = 0; bit < nm::kPregBits; ++bit)
    EXPECT_EQ(p.test(bit), bit % size_t(w) == 0 && bit / size_t(w) < n) << "bit " << bit;
}

// Duplicate(dst, scalar, count): pset ALL, vdup, then per register plt + vsts NORM.
void duplicate_f32(nm::VectorCore& vc, float* dst, float scalar, uint32_t count) {
  nm::Vreg reg;
  vc.vdup(reg, core::float_bits(scalar), nm::Width::kB32, vc.pset_b32(nm::Pattern::kAll), nm::Merge::kZeroing);
  uint32_t left = count;
  for (uint32_t i = 0; i < repeats(count, kF32PerReg); ++i)
    vc.vsts(reg, bytes(dst + i * kF32PerReg), nm::StoreDist::kNormB32, vc.plt_b32(left, nm::Post::kUpdate));
}
void duplicate_b16(nm::VectorCore& vc, uint16_t* dst, uint16_t scalar, uint32_t count) {
  nm::Vreg reg;
  vc.vdup(reg, scalar, nm::Width::kB16, vc.pset_b16(nm::Pattern::kAll), nm::Merge::kZeroing);
  uint32_t left = count;
  for (uint32_t i = 0; i < repeats(count, kB16PerReg); ++i)
    vc.vsts(reg, bytes(dst + i * kB16PerReg), nm::StoreDist::kNormB16, vc.plt_b16(left, nm::Post::kUpdate));
}

// Axpy(dst, src, scalar, count), float: plt, vlds src, vlds dst, vaxpy, vsts.
void axpy_f32(nm::VectorCore& vc, float* dst, const float* src, float scalar, uint32_t count) {
  uint32_t left = count;
  for (uint32_t i = 0; i < repeats(count, kF32PerReg); ++i) {
    const uint16_t mask = vc.plt_b32(left, nm::Post::kUpdate);
    nm::Vreg s, d;
    vc.vlds(s, bytes(src + i * kF32PerReg), nm::LoadDist::kNorm);
    vc.vlds(d, bytes(dst + i * kF32PerReg), nm::LoadDist::kNorm);
    vc.vaxpy(d, s, scalar, mask, nm::Merge::kZeroing);
    vc.vsts(d, bytes(dst + i * kF32PerReg), nm::StoreDist::kNormB32, mask);
  }
}

// Cast(bf16 dst, float src, CAST_RINT, count): plt_b32, vlds, vcvt (RINT, SAT, PART_EVEN), vsts PK_B32.
void cast_f32_to_bf16(nm::VectorCore& vc, uint16_t* dst, const float* src, uint32_t count) {
  uint32_t left = count;
  for (uint32_t i = 0; i < repeats(count, kF32PerReg); ++i) {
    const uint16_t mask = vc.plt_b32(left, nm::Post::kUpdate);
    nm::Vreg s, d;
    vc.vlds(s, bytes(src + i * kF32PerReg), nm::LoadDist::kNorm);
    vc.vcvt_f322bf16(d, s, mask, nm::Round::kRint, nm::Sat::kEnable, nm::Part::kEven, nm::Merge::kZeroing);
    vc.vsts(d, bytes(dst + i * kF32PerReg), nm::StoreDist::kPackB32, mask);
  }
}

uint16_t cast_one(nm::VectorCore& vc, float x) {
  std::vector<float> src(kF32PerReg, x);
  std::vector<uint16_t> dst(kF32PerReg, kPoison16);
  cast_f32_to_bf16(vc, dst.data(), src.data(), 1);
  return dst[0];
}

}  // namespace

// R寄存器数据类型/MaskReg.md, 调用示例: CreateMask<uint32_t, ALL>, then UpdateMask<uint32_t> twice from 127.
TEST(NpuModelVectorPredicate, UpdateMaskDocumentationExample) {
  nm::VectorCore vc;
  const uint16_t all = vc.pset_b32(nm::Pattern::kAll);
  expect_prefix(vc.pred(all), kF32PerReg, nm::Width::kB32);
  uint32_t scalar = 127;
  const uint16_t first = vc.plt_b32(scalar, nm::Post::kUpdate);
  EXPECT_EQ(scalar, 63u);
  EXPECT_EQ(first, all);  // a value has one handle
  const uint16_t second = vc.plt_b32(scalar, nm::Post::kUpdate);
  EXPECT_EQ(scalar, 0u);
  expect_prefix(vc.pred(second), 63, nm::Width::kB32);
  const uint16_t third = vc.plt_b32(scalar, nm::Post::kUpdate);  // saturates at 0
  EXPECT_EQ(scalar, 0u);
  EXPECT_EQ(third, 0);
  EXPECT_TRUE(vc.pred(third).none());
}

// The b16 form (MaskReg.md, 图3: b16 UpdateMask) and the patterns of the CreateMask table.
TEST(NpuModelVectorPredicate, B16UpdateAndPatterns) {
  nm::VectorCore vc;
  uint32_t scalar = 300;
  expect_prefix(vc.pred(vc.plt_b16(scalar, nm::Post::kUpdate)), kB16PerReg, nm::Width::kB16);
  EXPECT_EQ(scalar, 172u);
  vc.plt_b16(scalar, nm::Post::kUpdate);
  expect_prefix(vc.pred(vc.plt_b16(scalar, nm::Post::kUpdate)), 44, nm::Width::kB16);
  EXPECT_EQ(scalar, 0u);
  expect_prefix(vc.pred(vc.pset_b32(nm::Pattern::kVl8)), 8, nm::Width::kB32);
  expect_prefix(vc.pred(vc.pset_b16(nm::Pattern::kH)), kB16PerReg / 2, nm::Width::kB16);
  expect_prefix(vc.pred(vc.pset_b32(nm::Pattern::kQ)), kF32PerReg / 4, nm::Width::kB32);
  EXPECT_EQ(vc.pset_b32(nm::Pattern::kAllF), 0);
  expect_error([&] { vc.pset_b32(nm::Pattern::kM3); }, core::ErrorKind::kNotImplemented);
  expect_error([&] { vc.pset_b32(nm::Pattern::kVl128); }, core::ErrorKind::kNotImplemented);
  expect_error([&] { vc.plt_b32(scalar, nm::Post::kNoUpdate); }, core::ErrorKind::kNotImplemented);
  expect_error([&] { vc.pred(9999); }, core::ErrorKind::kValue);
}

// M数据填充/Duplicate.md, 调用示例 (tensor前n个数据, scalar 18.0, 256 elements), as bf16 (the b16 path) and
// float, plus tails that are not a multiple of 64 / 128; everything past count stays poisoned.
TEST(NpuModelVectorDuplicate, DocumentationExampleAndTails) {
  nm::VectorCore vc;
  const uint16_t bf18 = core::float_to_bf16(18.0f);
  for (uint32_t count : {256u, 131u, 7u}) {
    std::vector<uint16_t> dst(384, kPoison16);
    duplicate_b16(vc, dst.data(), bf18, count);
    for (size_t i = 0; i < dst.size(); ++i) ASSERT_EQ(dst[i], i < count ? bf18 : kPoison16) << count << " / " << i;
  }
  for (uint32_t count : {256u, 200u, 77u, 1u}) {
    std::vector<float> dst(320, kPoison);
    duplicate_f32(vc, dst.data(), 18.0f, count);
    for (size_t i = 0; i < dst.size(); ++i) ASSERT_EQ(dst[i], i < count ? 18.0f : kPoison) << count << " / " << i;
  }
}

// R辅助数据类型/MaskMergeMode.md (the Duplicate figure): ZEROING zeroes the inactive lanes, MERGING keeps them.
TEST(NpuModelVectorDuplicate, ZeroingAndMerging) {
  nm::VectorCore vc;
  const uint16_t vl8 = vc.pset_b32(nm::Pattern::kVl8);
  for (nm::Merge merge : {nm::Merge::kZeroing, nm::Merge::kMerging}) {
    nm::Vreg reg;
    for (size_t i = 0; i < kF32PerReg; ++i) reg.set<float>(i, 7.0f + float(i));
    vc.vdup(reg, core::float_bits(-2.5f), nm::Width::kB32, vl8, merge);
    for (size_t i = 0; i < kF32PerReg; ++i)
      EXPECT_EQ(reg.get<float>(i), i < 8 ? -2.5f : merge == nm::Merge::kZeroing ? 0.0f : 7.0f + float(i));
  }
}

// M复合计算/Axpy.md, 调用示例: src [1 .. 512], scalar 2.0, dst 0 -> [2, 4, .., 1024]; then a non-zero dst, a
// negative scalar and a count of 500 (a tail of 52 in the last register; the rest stays poisoned).
TEST(NpuModelVectorAxpy, DocumentationExampleAndTail) {
  nm::VectorCore vc;
  std::vector<float> src(512), dst(512, 0.0f);
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(i + 1);
  axpy_f32(vc, dst.data(), src.data(), 2.0f, 512);
  for (size_t i = 0; i < dst.size(); ++i) ASSERT_EQ(dst[i], 2.0f * float(i + 1));

  for (size_t i = 0; i < dst.size(); ++i) dst[i] = i < 500 ? 0.25f * float(i) - 3.0f : kPoison;
  axpy_f32(vc, dst.data(), src.data(), -0.75f, 500);
  for (size_t i = 0; i < dst.size(); ++i)
    ASSERT_EQ(dst[i], i < 500 ? -0.75f * float(i + 1) + 0.25f * float(i) - 3.0f : kPoison) << i;
}

// R复合计算/Axpy.md: ZEROING (inactive lanes of dstReg become 0); MERGING is not supported.
TEST(NpuModelVectorAxpy, RegisterZeroingAndRefusedMerging) {
  nm::VectorCore vc;
  nm::Vreg s, d;
  for (size_t i = 0; i < kF32PerReg; ++i) s.set<float>(i, float(i)), d.set<float>(i, 100.0f);
  uint32_t count = 5;
  const uint16_t mask = vc.plt_b32(count, nm::Post::kUpdate);
  vc.vaxpy(d, s, 3.0f, mask, nm::Merge::kZeroing);
  for (size_t i = 0; i < kF32PerReg; ++i) EXPECT_EQ(d.get<float>(i), i < 5 ? 3.0f * float(i) + 100.0f : 0.0f);
  expect_error([&] { vc.vaxpy(d, s, 3.0f, mask, nm::Merge::kMerging); }, core::ErrorKind::kNotImplemented);
}

// 基础API/数据结构/precision_conversion.md, float -> bfloat16_t: 0.5 + 2^-9 + 2^-11 -> CAST_RINT 0.5 + 2^-8; ties
// go to even, both signs; a count of 100 (36 in the second register) leaves the rest poisoned.
TEST(NpuModelVectorCast, DocumentationExampleTiesAndTail) {
  nm::VectorCore vc;
  EXPECT_EQ(core::bf16_to_float(cast_one(vc, 0.5f + std::ldexp(1.0f, -9) + std::ldexp(1.0f, -11))),
            0.5f + std::ldexp(1.0f, -8));
  EXPECT_EQ(core::bf16_to_float(cast_one(vc, 1.0f + std::ldexp(1.0f, -8))), 1.0f);  // tie, even below
  EXPECT_EQ(core::bf16_to_float(cast_one(vc, 1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(core::bf16_to_float(cast_one(vc, -(1.0f + 3 * std::ldexp(1.0f, -8)))), -(1.0f + std::ldexp(1.0f, -6)));

  std::vector<float> src(128);
  for (size_t i = 0; i < src.size(); ++i) src[i] = 1.0f + float(i) * std::ldexp(1.0f, -9) - 40.0f * float(i % 3);
  std::vector<uint16_t> dst(160, kPoison16);
  cast_f32_to_bf16(vc, dst.data(), src.data(), 100);
  for (size_t i = 0; i < dst.size(); ++i) ASSERT_EQ(dst[i], i < 100 ? core::float_to_bf16(src[i]) : kPoison16) << i;
}

// 基础API/特殊寄存器访问/SetCtrlSpr(ISASI).md, CTRL[48] / CTRL[60] and table 6: by default (CTRL[60] = 1,
// CTRL[48] = 0) conversions saturate (NaN -> 0, +-inf and overflow -> +-max); CTRL[48] = 1 keeps NaN / inf;
// with CTRL[60] = 0 the instruction's SatMode decides.
TEST(NpuModelVectorCast, SaturationModes) {
  constexpr uint16_t kMax = 0x7F7F, kNegMax = 0xFF7F, kInf = 0x7F80;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  nm::VectorCore vc;
  EXPECT_EQ(cast_one(vc, nan), 0);
  EXPECT_EQ(cast_one(vc, inf), kMax);
  EXPECT_EQ(cast_one(vc, -inf), kNegMax);
  EXPECT_EQ(cast_one(vc, std::numeric_limits<float>::max()), kMax);  // rounds up past the largest bf16
  vc.set_ctrl(nm::kDefaultCtrl | kCtrlNoSaturation);
  EXPECT_TRUE(std::isnan(core::bf16_to_float(cast_one(vc, nan))));
  EXPECT_EQ(cast_one(vc, inf), kInf);
  EXPECT_EQ(cast_one(vc, std::numeric_limits<float>::max()), kInf);
  vc.set_ctrl(nm::kDefaultCtrl & ~kCtrlGlobalSaturation);  // per instruction: the driver asks for SAT
  EXPECT_EQ(cast_one(vc, nan), 0);
  nm::Vreg s, d;
  s.set<float>(0, inf);
  vc.vcvt_f322bf16(d, s, vc.pset_b32(nm::Pattern::kAll), nm::Round::kRint, nm::Sat::kDisable, nm::Part::kEven,
                   nm::Merge::kZeroing);
  EXPECT_EQ(d.get<uint16_t>(0), kInf);
}

// R辅助数据类型/RegLayout.md, cast_b32_to_b16: dst[:] = 0, dst[layout::2] = src; inactive elements are 0 (Cast.md).
TEST(NpuModelVectorCast, PartPlacementAndZeroing) {
  nm::VectorCore vc;
  nm::Vreg s;
  for (size_t i = 0; i < kF32PerReg; ++i) s.set<float>(i, 1.5f + float(i));
  const uint16_t mask = vc.pset_b32(nm::Pattern::kVl16);
  for (nm::Part part : {nm::Part::kEven, nm::Part::kOdd}) {
    nm::Vreg d;
    d.bytes.fill(kPoison8);
    vc.vcvt_f322bf16(d, s, mask, nm::Round::kRint, nm::Sat::kEnable, part, nm::Merge::kZeroing);
    for (size_t slot = 0; slot < kB16PerReg; ++slot) {
      const size_t i = slot / 2;
      const bool here = i < 16 && slot % 2 == size_t(part);
      EXPECT_EQ(d.get<uint16_t>(slot), here ? core::float_to_bf16(s.get<float>(i)) : 0) << "slot " << slot;
    }
  }
  nm::Vreg d;
  expect_error([&] { vc.vcvt_f322bf16(d, s, mask, nm::Round::kFloor, nm::Sat::kEnable, nm::Part::kEven,
                                      nm::Merge::kZeroing); }, core::ErrorKind::kNotImplemented);
}

// R Reg数据搬出/连续对齐搬出（StoreAlign）.md, table 3, DIST_PACK_B16: src [0x3210, 0x7654, 0xBA98, 0xFEDC, ..,
// 0xFEDC, 0xBA98, 0x7654, 0x3210] -> dst [0x5410, 0xDC98, .., 0x98DC, 0x1054]; only VL / 2 bytes are written.
TEST(NpuModelVectorStore, PackDocumentationExampleAndMasks) {
  constexpr uint16_t kUp[4] = {0x3210, 0x7654, 0xBA98, 0xFEDC};
  nm::VectorCore vc;
  nm::Vreg reg;
  for (size_t i = 0; i < kB16PerReg; ++i) reg.set<uint16_t>(i, i < kB16PerReg / 2 ? kUp[i % 4] : kUp[3 - i % 4]);
  std::vector<uint16_t> dst(kB16PerReg, kPoison16);
  vc.vsts(reg, bytes(dst.data()), nm::StoreDist::kPackB16, vc.pset_b16(nm::Pattern::kAll));
  for (size_t i = 0; i < dst.size(); ++i) {
    const uint16_t want = i >= kB16PerReg / 2 ? kPoison16 : i < kB16PerReg / 4 ? (i % 2 ? 0xDC98 : 0x5410)
                                                                                : (i % 2 ? 0x1054 : 0x98DC);
    ASSERT_EQ(dst[i], want) << i;
  }
  // NORM under a scattered mask writes exactly the active elements; PACK refuses it.
  nm::Pred scattered;
  scattered.set(1 * sizeof(float)).set(3 * sizeof(float)).set(2);  // bit 2 is not an element's lowest bit
  const uint16_t mask = vc.intern(scattered);
  std::vector<float> out(kF32PerReg, kPoison);
  nm::Vreg f;
  for (size_t i = 0; i < kF32PerReg; ++i) f.set<float>(i, float(i) + 0.5f);
  nm::Accesses acc;
  vc.vsts(f, bytes(out.data()), nm::StoreDist::kNormB32, mask, &acc);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], i == 1 || i == 3 ? float(i) + 0.5f : kPoison);
  EXPECT_EQ(acc.size(), 2u);
  expect_error([&] { vc.vsts(f, bytes(out.data()), nm::StoreDist::kPackB32, mask); }, core::ErrorKind::kNotImplemented);
}

// M数据搬运/GM与UB数据搬运/UBToGM非对齐数据搬运(DataCopyPad).md, 图1 and 图2: blockLen 64 and 47, srcStride 1
// (32 B blocks), dstStride 1 (bytes). UB rows start 32 B aligned; only blockLen bytes reach GM.
TEST(NpuModelVectorDataCopyPad, DocumentationExamples) {
  for (uint32_t len : {64u, 47u}) {
    const nm::UbToGm op = nm::data_copy_pad_ub_to_gm(3, len, 1, 1);
    EXPECT_EQ(op.src_stride, 96u);  // align32(32 + len) for both
    EXPECT_EQ(op.dst_stride, len + 1);
    std::vector<uint8_t> ub(3 * 96), gm(3 * (len + 1) + 16, kPoison8);
    for (size_t i = 0; i < ub.size(); ++i) ub[i] = uint8_t(i * 7 + 1);
    nm::VectorCore vc;
    vc.copy_ubuf_to_gm_align_v2(gm.data(), ub.data(), op);
    for (size_t g = 0; g < gm.size(); ++g) {
      const size_t row = g / (len + 1), col = g % (len + 1);
      const bool data = row < 3 && col < len;
      ASSERT_EQ(gm[g], data ? ub[row * 96 + col] : kPoison8) << "len " << len << " byte " << g;
    }
  }
}

// float rows of 5 (blockLen 20 B, srcStride 0 -> UB rows every 32 B, dstStride 8 B -> GM rows every 7 floats)
// and bf16 rows of 13 (26 B, srcStride 1 -> every 64 B, dstStride 6 B -> every 16 bf16).
TEST(NpuModelVectorDataCopyPad, FloatAndBf16Rows) {
  nm::VectorCore vc;
  std::vector<float> ub(4 * 8), gm(4 * 7, kPoison);
  for (size_t i = 0; i < ub.size(); ++i) ub[i] = float(i) + 0.25f;
  vc.copy_ubuf_to_gm_align_v2(bytes(gm.data()), bytes(ub.data()), nm::data_copy_pad_ub_to_gm(4, 20, 0, 8));
  for (size_t i = 0; i < gm.size(); ++i) ASSERT_EQ(gm[i], i % 7 < 5 ? ub[i / 7 * 8 + i % 7] : kPoison) << i;

  std::vector<uint16_t> ub16(3 * 32), gm16(3 * 16, kPoison16);
  for (size_t i = 0; i < ub16.size(); ++i) ub16[i] = core::float_to_bf16(float(i) - 20.0f);
  vc.copy_ubuf_to_gm_align_v2(bytes(gm16.data()), bytes(ub16.data()), nm::data_copy_pad_ub_to_gm(3, 26, 1, 6));
  for (size_t i = 0; i < gm16.size(); ++i)
    ASSERT_EQ(gm16[i], i % 16 < 13 ? ub16[i / 16 * 32 + i % 16] : kPoison16) << i;
  const std::vector<uint16_t> before = gm16;  // blockCount 0: a no-op (the documentation's NOP rule)
  vc.copy_ubuf_to_gm_align_v2(bytes(gm16.data()), bytes(ub16.data()), nm::data_copy_pad_ub_to_gm(0, 26, 1, 6));
  EXPECT_EQ(gm16, before);
}

// 基础API/原子操作/SetAtomicAdd.md: SetAtomicAdd<float> (set_atomic_f32 + set_atomic_add) adds the moved floats
// to GM; DisableDmaAtomic (set_atomic_none) copies again. Other atomic types / ops are refused.
TEST(NpuModelVectorDataCopyPad, AtomicAdd) {
  nm::VectorCore vc;
  std::vector<float> ub(2 * 8), gm(2 * 6, kPoison);
  for (size_t i = 0; i < ub.size(); ++i) ub[i] = 0.5f * float(i) - 1.0f;
  for (size_t i = 0; i < gm.size(); ++i) gm[i] = i % 6 < 5 ? 1000.0f + float(i) : kPoison;
  const nm::UbToGm op = nm::data_copy_pad_ub_to_gm(2, 5 * sizeof(float), 0, sizeof(float));
  vc.set_atomic_type(nm::AtomicType::kF32);
  vc.set_atomic_add();
  nm::Accesses acc;
  vc.copy_ubuf_to_gm_align_v2(bytes(gm.data()), bytes(ub.data()), op, &acc);
  drop_start_rule(acc);
  EXPECT_EQ(acc.size(), 4u);  // a read and a write per row
  for (size_t i = 0; i < gm.size(); ++i)
    ASSERT_EQ(gm[i], i % 6 < 5 ? 1000.0f + float(i) + ub[i / 6 * 8 + i % 6] : kPoison) << i;
  expect_error([&] { vc.copy_ubuf_to_gm_align_v2(bytes(gm.data()), bytes(ub.data()), {1, 6, 0, 32}); },
               core::ErrorKind::kValue);
  vc.set_atomic_max();
  expect_error([&] { vc.copy_ubuf_to_gm_align_v2(bytes(gm.data()), bytes(ub.data()), op); },
               core::ErrorKind::kNotImplemented);
  vc.set_atomic_type(nm::AtomicType::kBF16);
  vc.set_atomic_add();
  expect_error([&] { vc.copy_ubuf_to_gm_align_v2(bytes(gm.data()), bytes(ub.data()), op); },
               core::ErrorKind::kNotImplemented);
  vc.set_atomic_none();
  vc.copy_ubuf_to_gm_align_v2(bytes(gm.data()), bytes(ub.data()), op);
  for (size_t i = 0; i < gm.size(); ++i) ASSERT_EQ(gm[i], i % 6 < 5 ? ub[i / 6 * 8 + i % 6] : kPoison) << i;
}

// C-API/vector_datamove/asc_copy_ub2gm_align/asc_copy_ub2gm_align_arch_3510.md, 调用示例: loop sizes 2 x 2, loop1
// strides 96 (UB) / 128 (GM), loop2 strides 192 / 288, 2 bursts of 48 B, both burst strides 48; the registers
// encoded as SetLoopModeParaImpl does. Then the reset value (1, 1) moves a single 2-burst block again.
TEST(NpuModelVectorDataCopyPad, LoopModeDocumentationExample) {
  constexpr uint64_t kLoopSizeShift = 21, kUbStrideShift = 40, kLen = 48;
  nm::VectorCore vc;
  vc.set_loop_size_ubtoout(2 << kLoopSizeShift | 2);
  vc.set_loop1_stride_ubtoout(uint64_t(96) << kUbStrideShift | 128);
  vc.set_loop2_stride_ubtoout(uint64_t(192) << kUbStrideShift | 288);
  std::vector<uint8_t> ub(384), gm(512, kPoison8);
  for (size_t i = 0; i < ub.size(); ++i) ub[i] = uint8_t(i * 5 + 3);
  const nm::UbToGm op{2, uint32_t(kLen), kLen, uint32_t(kLen)};
  vc.copy_ubuf_to_gm_align_v2(gm.data(), ub.data(), op);
  const size_t pairs[8][2] = {{0, 0}, {48, 48}, {96, 128}, {144, 176}, {192, 288}, {240, 336}, {288, 416}, {336, 464}};
  std::vector<int> want(gm.size(), -1);
  for (const auto& p : pairs)
    for (size_t k = 0; k < kLen; ++k) want[p[1] + k] = ub[p[0] + k];
  for (size_t g = 0; g < gm.size(); ++g) ASSERT_EQ(gm[g], want[g] < 0 ? kPoison8 : uint8_t(want[g])) << g;

  vc.set_loop_size_ubtoout(1 << kLoopSizeShift | 1);
  std::fill(gm.begin(), gm.end(), kPoison8);
  vc.copy_ubuf_to_gm_align_v2(gm.data(), ub.data(), op);
  for (size_t g = 0; g < gm.size(); ++g) ASSERT_EQ(gm[g], g < 2 * kLen ? ub[g] : kPoison8) << g;
  expect_error([&] { vc.copy_ubuf_to_gm_align_v2(gm.data(), ub.data(), {2, 48, 48, 40}); }, core::ErrorKind::kValue);
  vc.set_loop_size_ubtoout(1 << kLoopSizeShift);
  expect_error([&] { vc.copy_ubuf_to_gm_align_v2(gm.data(), ub.data(), op); }, core::ErrorKind::kNotImplemented);
}

// M数据搬运/GM与UB数据搬运/GMToUB非对齐数据搬运(DataCopyPad).md, 示例1 and 示例2: blockLen 64 and 47, srcStride 1
// (bytes), dstStride 1 (32 B blocks), no padding: GM rows every blockLen + 1 bytes, UB rows every
// align32(32 + blockLen) = 96 bytes; the row of 47 is padded to 64 with dummy data, its first element.
TEST(NpuModelVectorDataCopyPadIn, DocumentationExamples) {
  for (uint32_t len : {64u, 47u}) {
    const nm::GmToUb op = nm::data_copy_pad_gm_to_ub(3, len, 1, 1);
    EXPECT_EQ(op.src_stride, len + 1);
    EXPECT_EQ(op.dst_stride, 96u);
    std::vector<uint8_t> gm(3 * (len + 1)), ub(3 * 96, kPoison8);
    for (size_t i = 0; i < gm.size(); ++i) gm[i] = uint8_t(i * 7 + 1);
    nm::VectorCore vc;
    nm::Accesses acc;
    vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), 1, op, &acc);
    drop_start_rule(acc);
    ASSERT_EQ(acc.size(), 6u);  // per row a GM read and a UB write of the padded row
    EXPECT_EQ(acc[0].bytes, len);
    EXPECT_EQ(acc[1].bytes, 64u);
    EXPECT_TRUE(acc[1].write);
    for (size_t u = 0; u < ub.size(); ++u) {
      const size_t row = u / 96, col = u % 96;
      const uint8_t want = col < len ? gm[row * (len + 1) + col] : col < 64 ? gm[row * (len + 1)] : kPoison8;
      ASSERT_EQ(ub[u], want) << "len " << len << " byte " << u;
    }
  }
}

// 示例3 (Ascend 950): srcStride -blockLen (48) moves the first GM block every time; dstStride 1: UB rows every
// align32(32 + 48) = 96 bytes, each padded to 64 with its first element.
TEST(NpuModelVectorDataCopyPadIn, NegativeSourceStride) {
  const nm::GmToUb op = nm::data_copy_pad_gm_to_ub(3, 48, -48, 1);
  EXPECT_EQ(op.src_stride, 0u);
  EXPECT_EQ(op.dst_stride, 96u);
  std::vector<uint8_t> gm(64), ub(3 * 96, kPoison8);
  for (size_t i = 0; i < gm.size(); ++i) gm[i] = uint8_t(i * 3 + 11);
  nm::VectorCore vc;
  vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), 1, op);
  for (size_t u = 0; u < ub.size(); ++u) {
    const size_t col = u % 96;
    ASSERT_EQ(ub[u], col < 48 ? gm[col] : col < 64 ? gm[0] : kPoison8) << u;
  }
}

// float rows of 5 (blockLen 20 B, srcStride 8 B -> GM rows every 7 floats, dstStride 1 -> UB rows every 64 B)
// and bf16 rows of 13 (26 B, srcStride 6 B -> every 16 bf16, dstStride 0 -> every 32 B): each UB row is
// padded to 32 B with its first element, the rest of the UB stride stays untouched. blockCount 0: a no-op.
TEST(NpuModelVectorDataCopyPadIn, FloatAndBf16Rows) {
  nm::VectorCore vc;
  std::vector<float> gm(4 * 7), ub(4 * 16, kPoison);
  for (size_t i = 0; i < gm.size(); ++i) gm[i] = float(i) + 0.25f;
  const nm::GmToUb op = nm::data_copy_pad_gm_to_ub(4, 20, 8, 1);
  EXPECT_EQ(op.src_stride, 28u);
  EXPECT_EQ(op.dst_stride, 64u);
  vc.copy_gm_to_ubuf_align_v2(bytes(ub.data()), bytes(gm.data()), sizeof(float), op);
  for (size_t i = 0; i < ub.size(); ++i) {
    const size_t row = i / 16, col = i % 16;
    ASSERT_EQ(ub[i], col < 5 ? gm[row * 7 + col] : col < 8 ? gm[row * 7] : kPoison) << i;
  }

  std::vector<uint16_t> gm16(3 * 16), ub16(3 * 16, kPoison16);
  for (size_t i = 0; i < gm16.size(); ++i) gm16[i] = core::float_to_bf16(float(i) - 20.0f);
  vc.copy_gm_to_ubuf_align_v2(bytes(ub16.data()), bytes(gm16.data()), sizeof(uint16_t),
                              nm::data_copy_pad_gm_to_ub(3, 26, 6, 0));
  for (size_t i = 0; i < ub16.size(); ++i)
    ASSERT_EQ(ub16[i], i % 16 < 13 ? gm16[i] : gm16[i / 16 * 16]) << i;
  const std::vector<uint16_t> before = ub16;
  std::fill(gm16.begin(), gm16.end(), 0);
  vc.copy_gm_to_ubuf_align_v2(bytes(ub16.data()), bytes(gm16.data()), 2, nm::data_copy_pad_gm_to_ub(0, 26, 6, 0));
  vc.copy_gm_to_ubuf_align_v2(bytes(ub16.data()), bytes(gm16.data()), 2, nm::data_copy_pad_gm_to_ub(3, 0, 6, 0));
  EXPECT_EQ(ub16, before);
}

// C-API/vector_datamove/asc_copy_gm2ub_align/asc_copy_gm2ub_align_arch_3510.md, 调用示例: loop sizes 2 x 2, loop1
// strides 96 (GM) / 128 (UB), loop2 strides 192 / 288, 2 bursts of 48 B with both strides 48 (dst_stride ==
// len_burst: the bursts packed, 96 B, no dummy); the registers encoded as SetLoopModeParaImpl does. Then the
// reset value (1, 1); a UB loop stride that is not a multiple of 32 B and a loop size 0 are refused.
TEST(NpuModelVectorDataCopyPadIn, LoopModeDocumentationExample) {
  constexpr uint64_t kLoopSizeShift = 21, kUbStrideShift = 40, kLen = 48;
  nm::VectorCore vc;
  vc.set_loop_size_outtoub(2 << kLoopSizeShift | 2);
  vc.set_loop1_stride_outtoub(uint64_t(128) << kUbStrideShift | 96);
  vc.set_loop2_stride_outtoub(uint64_t(288) << kUbStrideShift | 192);
  std::vector<uint8_t> gm(384), ub(512, kPoison8);
  for (size_t i = 0; i < gm.size(); ++i) gm[i] = uint8_t(i * 5 + 3);
  const nm::GmToUb op{.n_burst = 2, .len_burst = uint32_t(kLen), .left_pad = 0, .right_pad = 0, .constant_pad = false,
                      .src_stride = kLen, .dst_stride = uint32_t(kLen)};
  vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), 1, op);
  const size_t pairs[8][2] = {{0, 0}, {48, 48}, {96, 128}, {144, 176}, {192, 288}, {240, 336}, {288, 416}, {336, 464}};
  std::vector<int> want(ub.size(), -1);
  for (const auto& p : pairs)
    for (size_t k = 0; k < kLen; ++k) want[p[1] + k] = gm[p[0] + k];
  for (size_t u = 0; u < ub.size(); ++u) ASSERT_EQ(ub[u], want[u] < 0 ? kPoison8 : uint8_t(want[u])) << u;

  vc.set_loop_size_outtoub(1 << kLoopSizeShift | 1);
  std::fill(ub.begin(), ub.end(), kPoison8);
  vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), 1, op);
  for (size_t u = 0; u < ub.size(); ++u) ASSERT_EQ(ub[u], u < 2 * kLen ? gm[u] : kPoison8) << u;
  vc.set_loop1_stride_outtoub(uint64_t(16) << kUbStrideShift);
  expect_error([&] { vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), 1, op); }, core::ErrorKind::kValue);
  vc.set_loop1_stride_outtoub(0);
  vc.set_loop_size_outtoub(1 << kLoopSizeShift);
  expect_error([&] { vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), 1, op); }, core::ErrorKind::kNotImplemented);
}

// asc_copy_gm2ub_align_arch_3510.md and DataCopyPad.md: padding (left / right, a constant value) is not
// modelled; a UB stride other than len_burst must be a multiple of 32 B and hold the padded row; packed
// blocks (dst_stride == len_burst) that end off a 32 B boundary would need a dummy tail (not modelled);
// blockLen is a multiple of the element size.
TEST(NpuModelVectorDataCopyPadIn, RefusedForms) {
  nm::VectorCore vc;
  std::vector<uint8_t> gm(512), ub(512);
  for (size_t i = 0; i < gm.size(); ++i) gm[i] = uint8_t(i);
  const auto copy = [&](const nm::GmToUb& op, size_t elem) {
    vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), elem, op);
  };
  const nm::GmToUb base = nm::data_copy_pad_gm_to_ub(3, 20, 0, 0);
  nm::GmToUb op = base;
  op.right_pad = 3;
  expect_error([&] { copy(op, 4); }, core::ErrorKind::kNotImplemented);
  op = base, op.left_pad = 1;
  expect_error([&] { copy(op, 4); }, core::ErrorKind::kNotImplemented);
  op = base, op.constant_pad = true;
  expect_error([&] { copy(op, 4); }, core::ErrorKind::kNotImplemented);
  expect_error([&] { copy({3, 20, 0, 0, false, 20, 40}, 4); }, core::ErrorKind::kValue);
  expect_error([&] { copy({3, 40, 0, 0, false, 40, 32}, 4); }, core::ErrorKind::kValue);  // rows of 64 every 32
  expect_error([&] { copy({3, 20, 0, 0, false, 20, 20}, 4); }, core::ErrorKind::kNotImplemented);
  expect_error([&] { copy(nm::data_copy_pad_gm_to_ub(3, 18, 0, 0), 4); }, core::ErrorKind::kValue);
  copy({4, 24, 0, 0, false, 24, 24}, 4);  // packed: 96 bytes
  for (size_t u = 0; u < 96; ++u) ASSERT_EQ(ub[u], gm[u]) << u;
}

// The access checker (hazards.hpp) sees the copy's UB writes, rows padded to 32 B: 3 rows of 20 B every 96 B
// in a UB of 200 bytes run past its end ([192, 224)); in bounds, a V read of a row the MTE2 copy wrote needs
// a flag between them (M数据搬运: DataCopyPad runs on PIPE_MTE2).
TEST(NpuModelVectorDataCopyPadIn, AccessCheckerSeesMte2Writes) {
  constexpr int kV = 1, kMte2 = 4;
  std::vector<uint8_t> gm(64), ub(256);
  nm::VectorCore vc;
  nm::Accesses acc;
  vc.copy_gm_to_ubuf_align_v2(ub.data(), gm.data(), sizeof(float), nm::data_copy_pad_gm_to_ub(3, 20, 0, 2), &acc);
  drop_start_rule(acc);
  ASSERT_EQ(acc.size(), 6u);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(acc[2 * r].p, gm.data() + 20 * r);
    EXPECT_EQ(acc[2 * r + 1].p, ub.data() + 96 * r);
    EXPECT_EQ(acc[2 * r + 1].bytes, 32u);
  }
  nm::Hazards small("k", "AIV0", {{"UB", ub.data(), 200}});
  try {
    small.instruction(kMte2, "copy_gm_to_ubuf_align_v2", acc);
    ADD_FAILURE() << "no error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("writes bytes [192, 224) of UB, which holds 200 bytes"), std::string::npos)
        << e.what();
  }
  nm::Hazards h("k", "AIV0", {{"UB", ub.data(), ub.size()}});
  h.instruction(kMte2, "copy_gm_to_ubuf_align_v2", acc);
  try {
    h.instruction(kV, "vlds", {{ub.data() + 96, 32, false}});
    ADD_FAILURE() << "no error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("with pipe MTE2"), std::string::npos) << e.what();
  }
}
