// The SwiGLU stage of Mega MoE (swiglu.asc) on the instruction model against the host's block::swiglu_row:
// e4m3 codes and UE8M0 scale words bit for bit (the model's exp and division are IEEE fp32 like the host's),
// bf16 outputs likewise; interleaved and [gate | up] rows, a clamp, K- and MN-major scale words, a row split
// into two chunks. Our reading of the documentation, not the 950.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "deepgemm_ascend/block/swiglu.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace block = deepgemm_ascend::block;
namespace core = deepgemm_ascend::core;
namespace runtime = deepgemm_ascend::runtime;

namespace {

struct SwigluCase {
  int64_t rows, inter;
  bool interleaved, fp8;
  float clamp;  // INFINITY: none
  bool sf_mn_major = false;
  int cores = 2;
  std::vector<int32_t> ends = {};  // psum ends (groups from starts aligned to 4): rows in the gaps untouched
  bool nan_gate = false;  // row 0's first gate value NaN, in its otherwise all-zero group
};

constexpr int64_t kEndsAlign = 4;

bool in_group(const SwigluCase& c, int64_t r) {
  if (c.ends.empty()) return true;
  int64_t start = 0;
  for (int32_t end : c.ends) {
    if (r < end) return r >= start;
    start = (end + kEndsAlign - 1) / kEndsAlign * kEndsAlign;
  }
  return false;
}

uint64_t addr(const void* p) { return uint64_t(uintptr_t(p)); }

// The number of output bytes and scale bytes that differ from the host's.
int64_t run_swiglu(const SwigluCase& c) {
  std::mt19937 rng(uint32_t(c.rows * 131 + c.inter));
  std::normal_distribution<float> nd(0.0f, 3.0f);
  const int64_t h_stride = 2 * c.inter + 32, item = c.fp8 ? 1 : 2, words = c.inter / 128;
  std::vector<uint16_t> h(size_t(c.rows * h_stride));
  for (auto& v : h) v = core::float_to_bf16(nd(rng));
  for (int64_t j = 0; j < 64 && c.rows > 0; ++j) h[size_t(j)] = 0;  // an all-zero group: the amax floor
  // A NaN output in that group: e4m3 NaN on the host, and on the NPU (CTRL[50], IeeeCasts); its amax is the
  // floor on both (the host's max skips NaN, the scalar scale code takes a NaN amax as the floor).
  if (c.nan_gate && c.rows > 0) h[0] = 0x7FC0;
  std::vector<float> w(size_t(c.rows));
  for (auto& v : w) v = nd(rng);
  const size_t out_bytes = size_t(c.rows * c.inter * item), sf_bytes = size_t(c.rows * words * 4);
  std::vector<uint8_t> host_out(out_bytes, 0x55), model_out(out_bytes, 0x55);
  std::vector<uint8_t> host_sf(sf_bytes, 0xAB), model_sf(sf_bytes, 0xAB);
  const int64_t row_bytes = c.sf_mn_major ? 4 : words * 4, word_bytes = c.sf_mn_major ? c.rows * 4 : 4;
  const block::SwigluParams p{c.clamp, true, c.fp8, c.interleaved};
  for (int64_t r = 0; r < c.rows; ++r)
    if (in_group(c, r))
      block::swiglu_row(h.data() + r * h_stride, c.inter, w[size_t(r)], p, host_out.data() + r * c.inter * item,
                      {host_sf.data() + r * row_bytes, word_bytes});
  const DgaSwigluParams q{.h = addr(h.data()), .weights = addr(w.data()), .out = addr(model_out.data()),
                          .sf = c.fp8 ? addr(model_sf.data()) : 0, .rows = c.rows, .inter = c.inter,
                          .h_stride = h_stride, .w_stride = 1, .out_stride = c.inter, .sf_row_bytes = row_bytes,
                          .sf_word_bytes = word_bytes, .clamp = c.clamp, .fp8_out = c.fp8 ? 1 : 0,
                          .interleaved = c.interleaved ? 1 : 0, .ends = c.ends.empty() ? 0 : addr(c.ends.data()),
                          .groups = int64_t(c.ends.size()), .align = kEndsAlign};
  runtime::npu_model_launch("dga_npu_launch_swiglu", unsigned(c.cores), &q);
  if (c.nan_gate) {  // output 0 of row 0 is NaN (then equal to the host's bits below)
    uint16_t v = model_out[0];
    if (!c.fp8) std::memcpy(&v, model_out.data(), sizeof v);
    EXPECT_TRUE(c.fp8 ? (v & 0x7F) == 0x7F : std::isnan(core::bf16_to_float(v))) << std::hex << v;
  }
  int64_t bad = 0;
  for (size_t i = 0; i < out_bytes; ++i) bad += host_out[i] != model_out[i];
  for (size_t i = 0; i < sf_bytes; ++i) bad += host_sf[i] != model_sf[i];
  return bad;
}

class NpuModelSwiglu : public ::testing::TestWithParam<SwigluCase> {};

TEST_P(NpuModelSwiglu, MatchesTheHostRowByRow) {
  if (!runtime::npu_model_available()) GTEST_SKIP() << runtime::npu_model_unavailable_reason();
  EXPECT_EQ(run_swiglu(GetParam()), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, NpuModelSwiglu,
    ::testing::Values(SwigluCase{.rows = 5, .inter = 256, .interleaved = true, .fp8 = true,
                                 .clamp = INFINITY}, SwigluCase{.rows = 3, .inter = 384,
                                                                           .interleaved = false, .fp8 = true,
                                                                           .clamp = 2.5f, .sf_mn_major = true},
                      SwigluCase{.rows = 4, .inter = 128, .interleaved = true, .fp8 = false,
                                 .clamp = 3.0f}, SwigluCase{.rows = 3, .inter = 256, .interleaved = false,
                                                                        .fp8 = false, .clamp = INFINITY,
                                                                        .sf_mn_major = false, .cores = 3},
                      SwigluCase{.rows = 1, .inter = 12160, .interleaved = true, .fp8 = true, .clamp = 4.0f,
                                 .sf_mn_major = true, .cores = 1},  // two chunks, a 128-value tail
                      SwigluCase{.rows = 11, .inter = 128, .interleaved = true, .fp8 = true, .clamp = INFINITY,
                                 .sf_mn_major = false, .cores = 2, .ends = {3, 7, 7, 10}},  // rows 3, 7, 10 in no group
                      SwigluCase{.rows = 2, .inter = 128, .interleaved = true, .fp8 = true, .clamp = INFINITY,
                                 .sf_mn_major = false, .cores = 1, .ends = {},
                                 .nan_gate = true},    // a NaN to e4m3: NaN
                      SwigluCase{.rows = 2, .inter = 128, .interleaved = true, .fp8 = false, .clamp = INFINITY,
                                 .sf_mn_major = false, .cores = 1, .ends = {},
                                 .nan_gate = true}));  // a NaN to bf16: NaN

}  // namespace
