// The NPU instruction model's GM -> L1 DMAs (npu_model/data_move.hpp) on the worked examples of the
// AscendC documentation (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/矩阵计算的搬入/
// 矩阵数据搬入至L1-Buffer/): "GMToL1随路转换-ND2NZ搬运（DataCopy）" and "GMToL1随路转换-DN2NZ搬运（DataCopy）",
// sections 连续搬运 (continuous) and 非连续搬运 (non-continuous), half data. The API parameters become
// instruction operands as impl/basic_api/dav_3510/kernel_operator_data_copy_impl.h converts them.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "deepgemm_ascend/npu_model/data_move.hpp"

namespace nm = deepgemm_ascend::npu_model;

namespace {

constexpr uint16_t kPoisonL1 = 0xFFFF;  // the fill of L1 values the DMA must not write
constexpr int kHalf = 2;

// The documentation's Nd2NzParams / Dn2NzParams (elements; dst strides in C0 units, matrix stride in
// elements), as the devkit hands them to the instruction.
struct ApiParams {
  uint16_t num, n;
  uint32_t d;
  uint64_t src_matrix_stride, src_d_value;
  uint16_t dst_c0_stride, dst_n_stride, dst_matrix_stride;
};

nm::Mte2NzPara para(const ApiParams& p) {
  const uint64_t loop4 = uint64_t(p.dst_matrix_stride) * kHalf / nm::kC0Bytes;
  return nm::Mte2NzPara::decode(loop4 << 48 | uint64_t(p.dst_c0_stride) << 32 | uint64_t(p.dst_n_stride) << 16 | p.num);
}
nm::GmToL1Nz op(const ApiParams& p) {
  return {.n = p.n, .d = p.d, .row_stride_bytes = p.src_d_value * kHalf,
          .matrix_stride_bytes = p.src_matrix_stride * kHalf, .small_c0 = false};
}

std::vector<uint16_t> iota(size_t n) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint16_t(i + 1);  // never 0 (the padding) or the poison
  return v;
}

uint8_t* bytes_of(std::vector<uint16_t>& v) { return reinterpret_cast<uint8_t*>(v.data()); }
const uint8_t* bytes_of(const std::vector<uint16_t>& v) { return reinterpret_cast<const uint8_t*>(v.data()); }

// Every element of dst is either expected[i] (where set) or untouched.
void expect_only(const std::vector<uint16_t>& dst, const std::vector<int64_t>& expected) {
  for (size_t i = 0; i < dst.size(); ++i) {
    if (expected[i] < 0) EXPECT_EQ(dst[i], kPoisonL1) << "element " << i << " was written";
    else EXPECT_EQ(dst[i], uint16_t(expected[i])) << "element " << i;
  }
}

}  // namespace

TEST(NpuModelDataMove, Mte2NzParaFieldsAreDecoded) {
  const nm::Mte2NzPara p = nm::Mte2NzPara::decode(uint64_t(20) << 48 | uint64_t(37) << 32 | uint64_t(2) << 16 | 2);
  EXPECT_EQ(p.count, 2);
  EXPECT_EQ(p.row_stride, 2);
  EXPECT_EQ(p.c0_stride, 37);
  EXPECT_EQ(p.matrix_stride, 20);
}

// Runs `copy` (nd2nz or dn2nz) on a documentation example and checks every destination element: value c
// of row r of matrix m (c < d, then zeros to 32 B) lands at m * dstNzMatrixStride + (c / 16) *
// dstNzC0Stride * 16 + r * dstNzNStride * 16 + c % 16 elements (half: 16 per C0); nothing else is written.
// src_at(m, r, c) is the value's index in the source.
template <class Copy, class SrcAt>
void expect_example(Copy copy, const ApiParams& p, size_t src_size, SrcAt src_at) {
  constexpr int kC0 = 16;
  const auto src = iota(src_size);
  std::vector<uint16_t> dst(size_t(p.dst_matrix_stride) * p.num + size_t(p.dst_c0_stride) * kC0 * 2 + 64, kPoisonL1);
  copy(bytes_of(dst), bytes_of(src), kHalf, op(p), para(p), nullptr);
  std::vector<int64_t> want(dst.size(), -1);
  for (int m = 0; m < p.num; ++m)
    for (int r = 0; r < p.n; ++r)
      for (int c = 0; c < 32; ++c)
        want[size_t(m * p.dst_matrix_stride + (c / kC0) * p.dst_c0_stride * kC0 + r * p.dst_n_stride * kC0 + c % kC0)] =
            c < int(p.d) ? src[src_at(m, r, c)] : 0;
  expect_only(dst, want);
}

// ND2NZ, continuous: ndNum 1, nValue 16, dValue 23, srcDValue 32, dstNzC0Stride 16, dstNzNStride 1. Row r's
// first 16 values form row r of Z fractal 0; values 16..22 start Z fractal 1 (16 C0 later), padded with 0
// to 32 B.
TEST(NpuModelDataMove, Nd2NzContinuousExample) {
  expect_example(nm::copy_gm_to_cbuf_nd2nz, {1, 16, 23, 0, 32, 16, 1, 0}, 16 * 32,
                 [](int, int r, int c) { return size_t(r * 32 + c); });
}

// ND2NZ, non-continuous: ndNum 2, nValue 8, dValue 23, srcNdMatrixStride 384, srcDValue 32,
// dstNzC0Stride 37, dstNzNStride 2, dstNzMatrixStride 320: the second matrix starts 320 elements on,
// rows are 2 C0 apart (every other fractal row stays untouched), Z fractals 37 C0 apart.
TEST(NpuModelDataMove, Nd2NzNonContinuousExample) {
  expect_example(nm::copy_gm_to_cbuf_nd2nz, {2, 8, 23, 384, 32, 37, 2, 320}, 2 * 384,
                 [](int m, int r, int c) { return size_t(m * 384 + r * 32 + c); });
}

// DN2NZ, continuous: dnNum 1, nValue 16 (the DN matrix's columns), dValue 23 (its rows), srcDValue 16,
// dstNzC0Stride 16, dstNzNStride 1: source column n becomes row n of the Nz matrix, its 23 values split
// over two Z fractals 16 C0 apart.
TEST(NpuModelDataMove, Dn2NzContinuousExample) {
  expect_example(nm::copy_gm_to_cbuf_dn2nz, {1, 16, 23, 0, 16, 16, 1, 0}, 23 * 16,
                 [](int, int n, int d) { return size_t(d * 16 + n); });
}

// DN2NZ, non-continuous: dnNum 2, nValue 8, dValue 23, srcDnMatrixStride 400, srcDValue 16,
// dstNzC0Stride 37, dstNzNStride 2, dstNzMatrixStride 320.
TEST(NpuModelDataMove, Dn2NzNonContinuousExample) {
  expect_example(nm::copy_gm_to_cbuf_dn2nz, {2, 8, 23, 400, 16, 37, 2, 320}, 2 * 400,
                 [](int m, int n, int d) { return size_t(m * 400 + d * 16 + n); });
}

// The constraints section: ndNum, nValue or dValue 0 is a no-op; packed 4-bit data moves as bytes (the
// parameters count bytes, one C0 holds 64 values).
TEST(NpuModelDataMove, ZeroExtentsAreNoOpsAndFp4MovesAsBytes) {
  const auto src = iota(64);
  std::vector<uint16_t> dst(64, kPoisonL1);
  for (const ApiParams& p : {ApiParams{.num = 0, .n = 4, .d = 8, .src_matrix_stride = 0, .src_d_value = 8,
                                       .dst_c0_stride = 4, .dst_n_stride = 1,
                                       .dst_matrix_stride = 0}, ApiParams{.num = 1, .n = 0, .d = 8,
                                                                          .src_matrix_stride = 0, .src_d_value = 8,
                                                                          .dst_c0_stride = 4, .dst_n_stride = 1,
                                                                          .dst_matrix_stride = 0},
                             ApiParams{.num = 1, .n = 4, .d = 0, .src_matrix_stride = 0, .src_d_value = 8,
                                       .dst_c0_stride = 4, .dst_n_stride = 1, .dst_matrix_stride = 0}}) {
    nm::copy_gm_to_cbuf_nd2nz(bytes_of(dst), bytes_of(src), kHalf, op(p), para(p));
    expect_only(dst, std::vector<int64_t>(dst.size(), -1));
  }
  // 2 rows of 40 bytes (80 fp4 values): C0 column 0 holds bytes 0..31 of each row, column 1 bytes 32..39
  // and 24 zero bytes.
  std::vector<uint8_t> b(2 * 40), out(2 * 2 * 32, 0xAB);
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(i + 1);
  nm::copy_gm_to_cbuf_nd2nz(out.data(), b.data(), 1, {.n = 2, .d = 40, .row_stride_bytes = 40, .matrix_stride_bytes = 0,
                                                      .small_c0 = false}, nm::Mte2NzPara{1, 1, 2, 0});
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 64; ++c) EXPECT_EQ(out[size_t((c / 32) * 64 + r * 32 + c % 32)], c < 40 ? b[size_t(r * 40 + c)] : 0);
}
