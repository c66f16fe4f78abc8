// The NPU instruction model's L1 -> L0 load (npu_model/load2d.hpp) on the worked example of the AscendC
// documentation, "LoadData（2D矩阵搬运V2）" (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/
// 矩阵计算（ISASI）/矩阵计算的搬入/矩阵数据搬入至L0-Buffer/LoadData_2D_V2.md), section 非转置场景搬入及搬运起始位置计算:
// mStartPosition 2, kStartPosition 2, mStep 2, kStep 3, srcStride 5, dstStride 3, half; the first
// fractal moved is the 13th of the source, (2 * 5 + 2) * 512 B in.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/load2d.hpp"

namespace nm = deepgemm_ascend::npu_model;

namespace {
constexpr size_t kValues = nm::kFractalBytes / sizeof(uint16_t);  // 256 half values per fractal
constexpr uint16_t kPoisonL0 = 0xFFFF;  // the fill of L0 values the load must not write
}  // namespace

TEST(NpuModelLoad2d, DocumentationExampleMovesFractalsByPositionAndStride) {
  // Source: 5 x 5 fractals, every value encodes (fractal, position).
  std::vector<uint16_t> src(25 * kValues);
  for (size_t f = 0; f < 25; ++f)
    for (size_t i = 0; i < kValues; ++i) src[f * kValues + i] = uint16_t(f * 1000 + i % 251);
  std::vector<uint16_t> dst(12 * kValues, kPoisonL0);
  const nm::Load2d op{.m_start = 2, .k_start = 2, .m_step = 2, .k_step = 3, .src_stride = 5, .dst_stride = 3,
                      .transpose = false};
  nm::load_cbuf_to_l0(reinterpret_cast<uint8_t*>(dst.data()), reinterpret_cast<const uint8_t*>(src.data()), op);
  // The first fractal moved is the 13th of the source (index 12).
  EXPECT_EQ(dst[0], uint16_t(12 * 1000));
  for (size_t ki = 0; ki < 3; ++ki)
    for (size_t slot = 0; slot < 3; ++slot) {  // dstStride 3: slot 2 of each K step is not written
      const size_t d = (ki * 3 + slot) * kValues;
      for (size_t i = 0; i < kValues; ++i) {
        if (slot < 2) ASSERT_EQ(dst[d + i], src[((2 + ki) * 5 + 2 + slot) * kValues + i]) << ki << " " << slot;
        else ASSERT_EQ(dst[d + i], kPoisonL0) << "fractal " << ki * 3 + slot << " was written";
      }
    }
}

// The documentation's usage example (m 40, k 70 half: mStep 3, kStep 5, both strides 3) copies an Nz tile
// whole; a zero step is a no-op.
TEST(NpuModelLoad2d, NzTileCopyAndZeroStep) {
  std::vector<uint16_t> src(15 * kValues), dst(15 * kValues, kPoisonL0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint16_t(i % 60000);
  auto* d = reinterpret_cast<uint8_t*>(dst.data());
  const auto* s = reinterpret_cast<const uint8_t*>(src.data());
  nm::load_cbuf_to_l0(d, s, {.m_start = 0, .k_start = 0, .m_step = 3, .k_step = 0, .src_stride = 3, .dst_stride = 3,
                             .transpose = false});
  EXPECT_EQ(dst, std::vector<uint16_t>(15 * kValues, kPoisonL0));
  nm::load_cbuf_to_l0(d, s, {.m_start = 0, .k_start = 0, .m_step = 3, .k_step = 5, .src_stride = 3, .dst_stride = 3,
                             .transpose = false});
  EXPECT_EQ(dst, src);
}

// The transposing load: an Nz source of R x C values (16-row fractals, c0 values per 32 B row) arrives as the
// Nz of its transpose (C x R) with the destination's fractal stride, for every element width; the square
// blocks' documented step constraints are errors.
TEST(NpuModelLoad2d, TransposingLoadWritesTheTransposeOfTheRegion) {
  for (int bits : {8, 16, 32}) {
    const size_t bytes = size_t(bits) / 8, c0 = 32 / bytes, per = nm::kFractalBytes / bytes;
    const uint16_t m_step = bits == 8 ? 2 : 1, k_step = bits == 32 ? 4 : 2;  // R = 16 m_step, C = c0 k_step
    const size_t rows = 16 * m_step, cols = c0 * k_step, src_stride = m_step + 1;  // one spare M fractal
    std::vector<uint8_t> src(k_step * src_stride * nm::kFractalBytes);
    const auto value = [&](size_t r, size_t c) { return uint32_t(r * 131 + c * 7 + 1); };
    const auto put = [&](uint8_t* p, size_t i, uint32_t v) { std::memcpy(p + i * bytes, &v, bytes); };
    const auto get = [&](const uint8_t* p, size_t i) { uint32_t v = 0; std::memcpy(&v, p + i * bytes, bytes); return v; };
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < cols; ++c) put(src.data(), ((c / c0) * src_stride + r / 16) * per + (r % 16) * c0 + c % c0, value(r, c));
    const size_t dst_row_groups = cols / 16, dst_col_groups = rows / c0, dst_stride = dst_row_groups;
    std::vector<uint8_t> dst(dst_col_groups * dst_stride * nm::kFractalBytes, 0xEE);
    nm::load_cbuf_to_l0(dst.data(), src.data(), {.m_start = 0, .k_start = 0, .m_step = m_step, .k_step = k_step,
                                                 .src_stride = int32_t(src_stride), .dst_stride = uint16_t(dst_stride),
                                                 .transpose = true, .elem_bits = bits});
    uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
    for (size_t i = 0; i < cols; ++i)      // row i of the transpose: column i of the source
      for (size_t j = 0; j < rows; ++j) {  // column j: row j of the source
        const size_t at = ((j / c0) * dst_stride + i / 16) * per + (i % 16) * c0 + j % c0;
        ASSERT_EQ(get(dst.data(), at), value(j, i) & mask) << "b" << bits << " (" << i << ", " << j << ")";
      }
  }
  std::vector<uint8_t> buf(8 * nm::kFractalBytes);
  EXPECT_THROW(nm::load_cbuf_to_l0(buf.data(), buf.data(), {.m_start = 0, .k_start = 0, .m_step = 1, .k_step = 1,
                                                            .src_stride = 1, .dst_stride = 1, .transpose = true,
                                                            .elem_bits = 8}), deepgemm_ascend::core::Error);
  EXPECT_THROW(nm::load_cbuf_to_l0(buf.data(), buf.data(), {.m_start = 0, .k_start = 0, .m_step = 1, .k_step = 1,
                                                            .src_stride = 1, .dst_stride = 1, .transpose = true,
                                                            .elem_bits = 32}), deepgemm_ascend::core::Error);
  EXPECT_THROW(nm::load_cbuf_to_l0(buf.data(), buf.data(), {.m_start = 0, .k_start = 0, .m_step = 2, .k_step = 1,
                                                            .src_stride = 1, .dst_stride = 1, .transpose = true,
                                                            .elem_bits = 4}), deepgemm_ascend::core::Error);
}
