// The NPU instruction model's Fixpipe (npu_model/fixpipe.hpp) on the worked example of the AscendC
// documentation, "L0C到UB数据搬运（Fixpipe）" / "L0C到GM数据搬运（Fixpipe）" (cannmirror/asc-devkit,
// docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/矩阵计算的搬出/), section 开启NZ2ND随路格式转换: ndNum 2, nSize 32,
// mSize 48, srcStride 64, dstStride 64, srcNdStride 16, dstNdStride 4096; the casts use CAST_RINT; the
// dual destination splits M in halves (双目标控制模式, M a multiple of 2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/fixpipe.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;

namespace {
constexpr float kPoisonF32 = -12345.0f;  // the fill of destination floats Fixpipe must not write
}

TEST(NpuModelFixpipe, Nz2NdDocumentationExample) {
  std::vector<float> src(2 * 16 * 256 + 2 * 64 * 16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(i % 9973) + 0.5f;
  std::vector<float> dst(2 * 4096, kPoisonF32);
  uint8_t* out[2] = {reinterpret_cast<uint8_t*>(dst.data()), nullptr};
  nm::Fixpipe op;
  op.n = 32, op.m = 48, op.src_stride = 64, op.dst_stride = 64, op.nd_num = 2, op.src_nd_stride = 16,
  op.dst_nd_stride = 4096;
  nm::fixpipe(out, src.data(), op);
  for (int nd = 0; nd < 2; ++nd)
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        const float got = dst[size_t(nd * 4096 + i * 64 + j)];
        if (i < 48 && j < 32) ASSERT_EQ(got, src[size_t(nd * 16 * 256 + (j / 16) * 64 * 16 + i * 16 + j % 16)]);
        else ASSERT_EQ(got, kPoisonF32) << "row " << i << " col " << j << " was written";
      }
}

// F322BF16 rounds to nearest even; atomic add accumulates into an fp32 destination; the dual destination
// sends the first m / 2 rows to sub-block 0 and the rest to sub-block 1 at the same offsets.
TEST(NpuModelFixpipe, CastsAtomicAddAndDualDestination) {
  std::vector<float> src(16 * 16, 0.0f);
  src[0] = 1.0f + std::ldexp(1.0f, -8);      // halfway between bf16 1 and 1 + 2^-7: to even (1)
  src[1] = 1.0f + 3 * std::ldexp(1.0f, -8);  // halfway between 1 + 2^-7 and 1 + 2^-6: to even (1 + 2^-6)
  std::vector<uint16_t> bf(16, 0);
  uint8_t* out[2] = {reinterpret_cast<uint8_t*>(bf.data()), nullptr};
  nm::Fixpipe op;
  op.n = 2, op.m = 1, op.src_stride = 16, op.dst_stride = 16, op.quant = nm::FixQuant::kF322BF16;
  nm::fixpipe(out, src.data(), op);
  EXPECT_EQ(core::bf16_to_float(bf[0]), 1.0f);
  EXPECT_EQ(core::bf16_to_float(bf[1]), 1.0f + std::ldexp(1.0f, -6));

  std::vector<float> acc(16, 2.0f);
  out[0] = reinterpret_cast<uint8_t*>(acc.data());
  op.quant = nm::FixQuant::kNone, op.atomic_add = true;
  nm::fixpipe(out, src.data(), op);
  EXPECT_EQ(acc[0], 2.0f + src[0]);
  EXPECT_EQ(acc[2], 2.0f);

  std::vector<float> tile(32 * 16);  // m 24 (two Z fractals of 16 rows), n 16
  for (size_t i = 0; i < tile.size(); ++i) tile[i] = float(i);
  std::vector<float> ub0(12 * 16, kPoisonF32), ub1(12 * 16, kPoisonF32);
  uint8_t* dual[2] = {reinterpret_cast<uint8_t*>(ub0.data()), reinterpret_cast<uint8_t*>(ub1.data())};
  nm::Fixpipe sp;
  sp.n = 16, sp.m = 24, sp.src_stride = 32, sp.dst_stride = 16, sp.dual_split_m = true;
  nm::fixpipe(dual, tile.data(), sp);
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < 16; ++j) ASSERT_EQ((i < 12 ? ub0 : ub1)[size_t((i % 12) * 16 + j)], tile[size_t(i * 16 + j)]);
  sp.m = 23;
  EXPECT_THROW(nm::fixpipe(dual, tile.data(), sp), core::Error);
}

// An int32 L0C (the integer Mmad's C) with NoQuant: the documentation example's NZ2ND moves, the int32
// values copied (the 950 tables: int32_t -> int32_t), including bit patterns that are NaN as floats.
TEST(NpuModelFixpipe, Int32SourceIsCopiedWithNoQuant) {
  std::vector<int32_t> src(2 * 16 * 256 + 2 * 64 * 16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = int32_t(0x7FC00001u + uint32_t(i) * 2654435761u);
  constexpr int32_t kPoison = -12345;
  std::vector<int32_t> dst(2 * 4096, kPoison);
  uint8_t* out[2] = {reinterpret_cast<uint8_t*>(dst.data()), nullptr};
  nm::Fixpipe op;
  op.n = 32, op.m = 48, op.src_stride = 64, op.dst_stride = 64, op.nd_num = 2, op.src_nd_stride = 16,
  op.dst_nd_stride = 4096, op.src_s32 = true;
  nm::fixpipe(out, reinterpret_cast<const float*>(src.data()), op);
  for (int nd = 0; nd < 2; ++nd)
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        const int32_t got = dst[size_t(nd * 4096 + i * 64 + j)];
        if (i < 48 && j < 32) ASSERT_EQ(got, src[size_t(nd * 16 * 256 + (j / 16) * 64 * 16 + i * 16 + j % 16)]);
        else ASSERT_EQ(got, kPoison) << "row " << i << " col " << j << " was written";
      }
}

// The quantisation modes of an int32 source (DEQF16, REQ8, QS322BF16_PRE, ...) and atomic add on it are not
// modelled: refused.
TEST(NpuModelFixpipe, Int32SourceRefusesQuantAndAtomicAdd) {
  std::vector<int32_t> src(256), dst(256);
  uint8_t* out[2] = {reinterpret_cast<uint8_t*>(dst.data()), nullptr};
  nm::Fixpipe op;
  op.n = 16, op.m = 16, op.src_stride = 16, op.dst_stride = 16, op.src_s32 = true, op.quant = nm::FixQuant::kF322F16;
  EXPECT_THROW(nm::fixpipe(out, reinterpret_cast<const float*>(src.data()), op), core::Error);
  op.quant = nm::FixQuant::kNone, op.atomic_add = true;
  EXPECT_THROW(nm::fixpipe(out, reinterpret_cast<const float*>(src.data()), op), core::Error);
}
