// Paged FP8 MQA logits on the instruction model: the logits prefilled by the conversion kernel (0 below
// each row's context length, -inf from it on), then the paged mix kernel (mqa_logits.asc) over a cache
// whose pages are scattered, against a double reference. Our reading of the documentation, not the 950.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/kernel/npu_params.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace core = deepgemm_ascend::core;
namespace runtime = deepgemm_ascend::runtime;

namespace {

struct PagedCase {
  int64_t batch, next_n, heads, dim, block_kv, width;
  int cores;
};

uint64_t addr(const void* p) { return uint64_t(uintptr_t(p)); }

// Returns the number of logits (and padding values) that are wrong.
int64_t run_paged_mqa(const PagedCase& c) {
  std::mt19937 rng(uint32_t(c.batch * 31 + c.next_n * 7 + c.heads + c.dim + c.block_kv + c.width));
  std::normal_distribution<float> nd;
  const int64_t pages = (c.width + c.block_kv - 1) / c.block_kv, table_cols = pages + 1;
  const int64_t num_blocks = c.batch * pages + 3, block_bytes = c.block_kv * (c.dim + 4) + 16;
  const int64_t rows = c.batch * c.next_n, ld = c.width + 8;
  std::vector<uint8_t> q(size_t(rows * c.heads * c.dim)), cache(size_t(num_blocks * block_bytes));
  for (auto& v : q) v = core::float_to_e4m3(nd(rng));
  for (int64_t b = 0; b < num_blocks; ++b) {
    uint8_t* block = cache.data() + b * block_bytes;
    for (int64_t i = 0; i < c.block_kv * c.dim; ++i) block[i] = core::float_to_e4m3(nd(rng));
    auto* scale = reinterpret_cast<float*>(block + c.block_kv * c.dim);
    for (int64_t i = 0; i < c.block_kv; ++i) scale[i] = std::ldexp(1.0f + 0.1f * nd(rng), -4);
  }
  std::vector<float> w(size_t(rows * c.heads)), logits(size_t(rows * ld), NAN);
  for (auto& v : w) v = nd(rng);
  // Lengths: anything in [0, width]; request 0 attends to nothing. Pages: a permutation of the blocks; the
  // entries past a request's pages are -1 (never read).
  std::uniform_int_distribution<int32_t> len(0, int32_t(c.width));
  std::vector<int32_t> lens(static_cast<size_t>(rows)), table(static_cast<size_t>(c.batch * table_cols), -1);
  for (int64_t r = 0; r < rows; ++r) lens[size_t(r)] = r < c.next_n ? 0 : len(rng);
  std::vector<int32_t> ids(static_cast<size_t>(num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  for (int64_t b = 0; b < c.batch; ++b) {
    const int32_t longest = *std::max_element(lens.begin() + b * c.next_n, lens.begin() + (b + 1) * c.next_n);
    for (int64_t p = 0; p * c.block_kv < longest; ++p) table[size_t(b * table_cols + p)] = ids[size_t(b * pages + p)];
  }
  DgaConvertParams fill{{0, rows, c.width, c.width, 1}, {addr(logits.data()), rows, c.width, ld, 1},
                        int32_t(core::DType::kFP32), int32_t(core::DType::kFP32), addr(lens.data())};
  runtime::npu_model_launch("dga_npu_launch_convert_rows", unsigned(c.cores * 2), &fill);
  DgaPagedMqaParams p{};
  DgaGemmParams& g = p.mqa.gemm;
  g.a = {addr(q.data()), c.next_n * c.heads, c.dim, c.dim, 1};
  g.b = {addr(cache.data()), c.block_kv, c.dim, c.dim, 1};
  g.d_dtype = int32_t(core::DType::kFP32);
  g.block_m = (c.heads + 15) / 16 * 16, g.block_n = c.block_kv, g.block_k = c.dim, g.l0_k = c.dim;
  g.swizzle_band = 1, g.swizzle_along_m = 1;
  p.mqa.weights = addr(w.data()), p.mqa.logits = addr(logits.data());
  p.mqa.w_stride = c.heads, p.mqa.logits_stride = ld, p.mqa.heads = c.heads;
  p.context_lens = addr(lens.data()), p.block_table = addr(table.data());
  p.batch = c.batch, p.next_n = c.next_n, p.pages = pages, p.width = c.width, p.num_blocks = num_blocks;
  p.table_stride = table_cols, p.block_bytes = block_bytes;
  runtime::npu_model_launch("dga_npu_launch_paged_mqa_logits_fp8", unsigned(c.cores), &p);

  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / c.next_n;
    for (int64_t j = 0; j < ld; ++j) {
      const float got = logits[size_t(r * ld + j)];
      if (j >= c.width) {  // the rows' padding: untouched
        bad += !std::isnan(got);
        continue;
      }
      if (j >= lens[size_t(r)]) {
        bad += !(std::isinf(got) && got < 0);
        continue;
      }
      const uint8_t* block = cache.data() + table[size_t(b * table_cols + j / c.block_kv)] * block_bytes;
      const uint8_t* kv = block + (j % c.block_kv) * c.dim;
      const float scale = reinterpret_cast<const float*>(block + c.block_kv * c.dim)[j % c.block_kv];
      double want = 0, mag = 0;
      for (int64_t h = 0; h < c.heads; ++h) {
        double dot = 0;
        for (int64_t x = 0; x < c.dim; ++x)
          dot += double(core::e4m3_to_float(q[size_t((r * c.heads + h) * c.dim + x)])) * core::e4m3_to_float(kv[x]);
        want += std::max(dot, 0.0) * w[size_t(r * c.heads + h)];
        mag += std::max(dot, 0.0) * std::fabs(w[size_t(r * c.heads + h)]);
      }
      want *= scale;
      bad += !(std::fabs(got - want) <= 1e-5 * mag * scale + 1e-6);
    }
  }
  return bad;
}

TEST(NpuKernelsOnModel, PagedFp8MqaLogitsMatchTheReference) {
  EXPECT_EQ(run_paged_mqa({3, 2, 16, 64, 32, 150, 2}), 0) << "next_n 2, block_kv 32, a partial last page";
  EXPECT_EQ(run_paged_mqa({4, 1, 8, 32, 64, 200, 3}), 0) << "8 heads (two queries per tile row block), block_kv 64";
  EXPECT_EQ(run_paged_mqa({2, 1, 64, 128, 64, 128, 1}), 0) << "64 heads, head_dim 128, one core";
}

}  // namespace
