// Paged MQA logits (FP8, and FP4 with UE8M0 row scales) on the instruction model: the logits prefilled by
// the conversion kernel (0 below each row's context length, -inf from it on), then the paged mix kernel
// (mqa_logits.asc) over a cache whose pages are scattered, against a double reference, under the GM bounds
// checker (every DMA inside the tensors of the launch). Hostile cases put device-resident values no host
// code checked into context_lens (negative, past the width) and block_table (negative, past the cache):
// such a row attends to nothing or to the width, such a page is not read and its logits keep the fill.
// Our reading of the documentation, not the 950.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/heuristics/mqa_tiling.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace core = deepgemm_ascend::core;
namespace heuristics = deepgemm_ascend::heuristics;
namespace runtime = deepgemm_ascend::runtime;

namespace {

struct PagedCase {
  int64_t batch, next_n, heads, dim, block_kv, width;
  int cores;
  bool fp4 = false;
  int64_t l0_k = 0;  // 0: dim (one K step per tile)
  bool hostile = false;
};

template <class T>
runtime::GmRegion region(const char* name, const std::vector<T>& v) {
  return {name, v.data(), v.size() * sizeof(T)};
}

// FP4 rows: packed e2m1 (low nibble first) with one int32 of four UE8M0 scales (one per 32 values).
double fp4_value(const uint8_t* row, const uint8_t* scales, int64_t x) {
  return core::e2m1_to_float(uint8_t(row[x / 2] >> (4 * (x % 2)))) * std::ldexp(1.0, int(scales[x / 32]) - 127);
}

uint64_t addr(const void* p) { return uint64_t(uintptr_t(p)); }

// Returns the number of logits (and padding values) that are wrong.
int64_t run_paged_mqa(const PagedCase& c) {
  std::mt19937 rng(uint32_t(c.batch * 31 + c.next_n * 7 + c.heads + c.dim + c.block_kv + c.width));
  std::normal_distribution<float> nd;
  const int64_t pages = (c.width + c.block_kv - 1) / c.block_kv, table_cols = pages + 1;
  const int64_t row_bytes = c.fp4 ? c.dim / 2 : c.dim;
  const int64_t num_blocks = c.batch * pages + 3, block_bytes = c.block_kv * (row_bytes + 4) + 16;
  const int64_t rows = c.batch * c.next_n, ld = c.width + 8;
  std::uniform_int_distribution<int> byte(0, 255), ex(120, 134);
  const auto code = [&]() { return c.fp4 ? uint8_t(byte(rng)) : core::float_to_e4m3(nd(rng)); };
  std::vector<uint8_t> q(size_t(rows * c.heads * row_bytes)), sfq(size_t(rows * c.heads * 4)),
      cache(size_t(num_blocks * block_bytes));
  for (auto& v : q) v = code();
  for (auto& v : sfq) v = uint8_t(ex(rng));
  for (int64_t b = 0; b < num_blocks; ++b) {
    uint8_t* block = cache.data() + b * block_bytes;
    for (int64_t i = 0; i < c.block_kv * row_bytes; ++i) block[i] = code();
    uint8_t* tail = block + c.block_kv * row_bytes;  // fp32 scales, or four UE8M0 scales per row
    for (int64_t i = 0; i < c.block_kv; ++i) {
      if (c.fp4)
        for (int64_t e = 0; e < 4; ++e) tail[4 * i + e] = uint8_t(ex(rng));
      else
        reinterpret_cast<float*>(tail)[i] = std::ldexp(1.0f + 0.1f * nd(rng), -4);
    }
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
  if (c.hostile) {  // request 1's rows: negative and huge lengths; every request's page 1 outside the cache
    const int32_t bad_lens[] = {INT32_MIN, -3, int32_t(c.width) + 100, INT32_MAX};
    for (int64_t t = 0; t < c.next_n; ++t) lens[size_t(c.next_n + t)] = bad_lens[t % 4];
    const int32_t bad_ids[] = {-7, int32_t(num_blocks), INT32_MAX, INT32_MIN};
    for (int64_t b = 0; b < c.batch; ++b) table[size_t(b * table_cols + 1)] = bad_ids[b % 4];
    for (int64_t b = 0; b < c.batch; ++b)  // request 1's pages: real blocks, as its huge lengths reach them all
      for (int64_t p = 0; p < pages; ++p)
        if (b == 1 && p != 1) table[size_t(b * table_cols + p)] = ids[size_t(b * pages + p)];
  }
  const std::vector<runtime::GmRegion> gm = {region("q", q),         region("sfq", sfq),   region("kv_cache", cache),
                                             region("weights", w),   region("logits", logits),
                                             region("context_lens", lens), region("block_table", table)};
  DgaConvertParams fill{.src = {0, rows, c.width, c.width, 1}, .dst = {addr(logits.data()), rows, c.width, ld, 1},
                        .src_dtype = int32_t(core::DType::kFP32), .dst_dtype = int32_t(core::DType::kFP32),
                        .lens = addr(lens.data()),
                        .starts = 0};
  runtime::npu_model_launch("dga_npu_launch_convert_rows", unsigned(c.cores * 2), &fill, gm);
  DgaPagedMqaParams p{};
  DgaGemmParams& g = p.mqa.gemm;
  g.a = {.addr = addr(q.data()), .rows = c.next_n * c.heads, .cols = c.dim, .row_stride = c.dim, .col_stride = 1};
  g.b = {.addr = addr(cache.data()), .rows = c.block_kv, .cols = c.dim, .row_stride = c.dim, .col_stride = 1};
  g.d_dtype = int32_t(core::DType::kFP32);
  g.block_m = heuristics::npu_paged_mqa_config(c.heads, c.next_n, c.block_kv, c.dim).tiling.block_m;  // the product's
  g.block_n = c.block_kv, g.block_k = c.dim, g.l0_k = c.l0_k ? c.l0_k : c.dim;
  if (c.fp4) {  // int16 pairs of K-adjacent scales, K-major: pair p of row r at r * 4 + p * 2 bytes
    g.sfa = {.addr = addr(sfq.data()), .mn_stride = 4, .k_stride = 2, .gran_mn = 1, .fp32 = 0};
    g.sfb = {.addr = addr(cache.data() + c.block_kv * row_bytes), .mn_stride = 4, .k_stride = 2, .gran_mn = 1,
             .fp32 = 0};
  }
  g.swizzle_band = 1, g.swizzle_along_m = 1;
  p.mqa.weights = addr(w.data()), p.mqa.logits = addr(logits.data());
  p.mqa.w_stride = c.heads, p.mqa.logits_stride = ld, p.mqa.heads = c.heads;
  p.context_lens = addr(lens.data()), p.block_table = addr(table.data());
  p.batch = c.batch, p.next_n = c.next_n, p.pages = pages, p.width = c.width, p.num_blocks = num_blocks;
  p.table_stride = table_cols, p.block_bytes = block_bytes;
  runtime::npu_model_launch(c.fp4 ? "dga_npu_launch_paged_mqa_logits_fp4" : "dga_npu_launch_paged_mqa_logits_fp8",
                            unsigned(c.cores), &p, gm);

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
      const int32_t id = table[size_t(b * table_cols + j / c.block_kv)];
      if (id < 0 || id >= num_blocks) {  // a page outside the cache: the fill's 0
        bad += got != 0.0f;
        continue;
      }
      const uint8_t* block = cache.data() + int64_t(id) * block_bytes;
      const uint8_t* kv = block + (j % c.block_kv) * row_bytes;
      const uint8_t* tail = block + c.block_kv * row_bytes + (j % c.block_kv) * 4;
      const double scale = c.fp4 ? 1.0 : double(*reinterpret_cast<const float*>(tail));
      double want = 0, mag = 0;
      for (int64_t h = 0; h < c.heads; ++h) {
        double dot = 0;
        const uint8_t* qr = q.data() + (r * c.heads + h) * row_bytes;
        for (int64_t x = 0; x < c.dim; ++x)
          dot += c.fp4 ? fp4_value(qr, sfq.data() + (r * c.heads + h) * 4, x) * fp4_value(kv, tail, x)
                       : double(core::e4m3_to_float(qr[x])) * core::e4m3_to_float(kv[x]);
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
  EXPECT_EQ(run_paged_mqa({.batch = 3, .next_n = 2, .heads = 16, .dim = 64, .block_kv = 32, .width = 150,
                           .cores = 2}), 0) << "next_n 2, block_kv 32, a partial last page";
  EXPECT_EQ(run_paged_mqa({.batch = 4, .next_n = 1, .heads = 8, .dim = 32, .block_kv = 64, .width = 200,
                           .cores = 3}), 0) << "8 heads (one query in a 16-row tile), block_kv 64";
  EXPECT_EQ(run_paged_mqa({.batch = 2, .next_n = 1, .heads = 64, .dim = 128, .block_kv = 64, .width = 128,
                           .cores = 1}), 0) << "64 heads, head_dim 128, one core";
}

TEST(NpuKernelsOnModel, PagedMqaLogitsStayInsideOnHostileLensAndTable) {
  EXPECT_EQ(run_paged_mqa({.batch = 4, .next_n = 2, .heads = 16, .dim = 64, .block_kv = 32, .width = 150, .cores = 2,
                           .fp4 = false, .l0_k = 0, .hostile = true}), 0) << "fp8";
  EXPECT_EQ(run_paged_mqa({.batch = 3, .next_n = 4, .heads = 8, .dim = 128, .block_kv = 32, .width = 100, .cores = 1,
                           .fp4 = true, .l0_k = 0, .hostile = true}), 0) << "fp4";
}

TEST(NpuKernelsOnModel, PagedFp4MqaLogitsMatchTheReference) {
  EXPECT_EQ(run_paged_mqa({.batch = 3, .next_n = 2, .heads = 16, .dim = 128, .block_kv = 32, .width = 150, .cores = 2,
                           .fp4 = true}), 0) << "the MX cube's scales per block and request";
  EXPECT_EQ(run_paged_mqa({.batch = 2, .next_n = 1, .heads = 8, .dim = 128, .block_kv = 64, .width = 100, .cores = 1,
                           .fp4 = true, .l0_k = 64}), 0)
      << "two K steps per tile: the product goes to the vector cores after the last";
}

}  // namespace
