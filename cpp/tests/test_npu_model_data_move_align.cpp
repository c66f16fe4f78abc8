// The NPU instruction model's plain GM -> L1 DMA (npu_model/data_move_align.hpp) on the call example of
// asc_copy_gm2l1_align.md (cannmirror/asc-devkit, docs/zh/api/SIMD-API/C-API/cube_datamove/): half data,
// two bursts of 64 bytes, no padding, data_select_bit false; here with strides that separate the bursts
// (the page's example passes 0), and the forms the page forbids or the model does not take.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/data_move_align.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;

// A named namespace around the whole file: the unity test build joins this file with others.
namespace data_move_align_test {

constexpr uint16_t kPoison = 0xFFFF;  // the fill of L1 the DMA must not write
constexpr uint32_t kHalf = 2;

std::vector<uint16_t> gm_halves(size_t n) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint16_t(i + 1);
  return v;
}

void move(std::vector<uint16_t>& l1, const std::vector<uint16_t>& gm, const nm::GmToL1Align& op) {
  nm::copy_gm_to_cbuf_align(reinterpret_cast<uint8_t*>(l1.data()), reinterpret_cast<const uint8_t*>(gm.data()), op);
}


TEST(NpuModelDataMoveAlign, BurstsLandAtTheirStrides) {
  const auto gm = gm_halves(256);
  std::vector<uint16_t> l1(256, kPoison);
  // 2 bursts of 64 B (32 halves); GM bursts 128 B apart, L1 bursts 96 B apart.
  move(l1, gm, {.n_burst = 2, .len_burst = 64, .src_stride = 128, .dst_stride = 96});
  for (size_t i = 0; i < l1.size(); ++i) {
    const size_t burst = i / (96 / kHalf), at = i % (96 / kHalf);
    const bool written = burst < 2 && at < 64 / kHalf;
    const uint16_t expect = written ? gm[burst * (128 / kHalf) + at] : kPoison;
    ASSERT_EQ(l1[i], expect) << "L1 half " << i;
  }
}

TEST(NpuModelDataMoveAlign, PackedBurstsAreOneCopy) {
  // DataCopy with zero gaps: rows head to head at len_burst on both sides, the contiguous 4 x 32 B.
  const auto gm = gm_halves(64);
  std::vector<uint16_t> l1(64, kPoison);
  move(l1, gm, {.n_burst = 4, .len_burst = 32, .src_stride = 32, .dst_stride = 32});
  EXPECT_EQ(l1, gm);
}

TEST(NpuModelDataMoveAlign, DataSelectOnlyPicksThePaddingValue) {
  // DataCopy's lowering passes data_select_bit true; with no padding it moves the same bytes as false.
  const auto gm = gm_halves(64);
  std::vector<uint16_t> l1(64, kPoison);
  move(l1, gm, {.n_burst = 2, .len_burst = 64, .data_select = true, .src_stride = 64, .dst_stride = 64});
  EXPECT_EQ(l1, gm);
}

TEST(NpuModelDataMoveAlign, ZeroBurstsMoveNothing) {
  const auto gm = gm_halves(32);
  std::vector<uint16_t> l1(32, kPoison);
  move(l1, gm, {.n_burst = 0, .len_burst = 64, .src_stride = 64, .dst_stride = 64});
  EXPECT_EQ(l1, std::vector<uint16_t>(32, kPoison));
}

TEST(NpuModelDataMoveAlign, RefusesWhatIsNotModelledOrForbidden) {
  const auto gm = gm_halves(256);
  std::vector<uint16_t> l1(256, kPoison);
  const auto kind = [&](const nm::GmToL1Align& op) {
    try {
      move(l1, gm, op);
    } catch (const core::Error& e) {
      return e.kind();
    }
    ADD_FAILURE() << "no refusal";
    return core::ErrorKind::kRuntime;
  };
  using K = core::ErrorKind;
  EXPECT_EQ(kind({.n_burst = 1, .len_burst = 64, .left_pad = 2}), K::kNotImplemented);
  EXPECT_EQ(kind({.n_burst = 1, .len_burst = 64, .right_pad = 2}), K::kNotImplemented);
  EXPECT_EQ(kind({.n_burst = 1, .len_burst = 48}), K::kNotImplemented);  // a partial 32 B block
  EXPECT_EQ(kind({.n_burst = 2, .len_burst = 64, .src_stride = 64, .dst_stride = 80}), K::kValue);  // not 32 B apart
  EXPECT_EQ(kind({.n_burst = 2, .len_burst = 64, .src_stride = 64, .dst_stride = 32}), K::kValue);  // overlapping
  EXPECT_EQ(l1, std::vector<uint16_t>(256, kPoison));  // a refused move writes nothing
}

}  // namespace data_move_align_test
