// The NPU instruction model's L1 -> L0 load (npu_model/load2d.hpp) on the worked example of the AscendC
// documentation, "LoadData（2D矩阵搬运V2）" (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/
// 矩阵计算（ISASI）/矩阵计算的搬入/矩阵数据搬入至L0-Buffer/LoadData_2D_V2.md), section 非转置场景搬入及搬运起始位置计算:
// mStartPosition 2, kStartPosition 2, mStep 2, kStep 3, srcStride 5, dstStride 3, half; the first
// fractal moved is the 13th of the source, (2 * 5 + 2) * 512 B in.
#include <gtest/gtest.h>

#include <cstdint>
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
  const nm::Load2d op{2, 2, 2, 3, 5, 3, false};
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
// whole; a zero step is a no-op; transposition is refused, not guessed.
TEST(NpuModelLoad2d, NzTileCopyZeroStepAndTransposition) {
  std::vector<uint16_t> src(15 * kValues), dst(15 * kValues, kPoisonL0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint16_t(i % 60000);
  auto* d = reinterpret_cast<uint8_t*>(dst.data());
  const auto* s = reinterpret_cast<const uint8_t*>(src.data());
  nm::load_cbuf_to_l0(d, s, {0, 0, 3, 0, 3, 3, false});
  EXPECT_EQ(dst, std::vector<uint16_t>(15 * kValues, kPoisonL0));
  nm::load_cbuf_to_l0(d, s, {0, 0, 3, 5, 3, 3, false});
  EXPECT_EQ(dst, src);
  EXPECT_THROW(nm::load_cbuf_to_l0(d, s, {0, 0, 1, 1, 1, 1, true}), deepgemm_ascend::core::Error);
}
