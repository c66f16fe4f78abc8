// The problem sources of the GEMM kernel (kernel/gemm_problems.hpp), which the NPU kernels use to read
// grouped layouts on the device: run here on the host target against a double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/host/host_target.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
using dga::core::DType;

namespace {

constexpr uint16_t kPoisonBf16 = 0x7FC0;  // bf16 NaN: rows the kernel must not write stay NaN

template <class Problems>
void run(const Problems& problems) {
  dga::kernel::GemmArgs args{};
  args.config.tiling = {64, 64, 64, 32, dga::kernel::kL1Stages, dga::kernel::kL0Stages};
  args.config.num_blocks = 2;
  dga::runtime::host_backend().launch("gemm_problems_test", 2, [&](dga::tile::host::Core& core) {
    dga::kernel::gemm<dga::tile::host::HostTarget>(core, args, args.config.tiling, problems);
  });
}

// Row r of D (n values) against A row r times B^T of group g; NaN rows where g < 0.
void expect_row(const std::vector<uint16_t>& d, int64_t r, int64_t g, const std::vector<uint16_t>& a,
                const std::vector<uint16_t>& b, int64_t n, int64_t k, int64_t b_rows) {
  for (int64_t j = 0; j < n; ++j) {
    const float got = dga::core::bf16_to_float(d[size_t(r * n + j)]);
    if (g < 0) {
      ASSERT_TRUE(std::isnan(got)) << "row " << r << " was written";
      continue;
    }
    double s = 0;
    for (int64_t x = 0; x < k; ++x)
      s += double(dga::core::bf16_to_float(a[size_t(r * k + x)])) *
           dga::core::bf16_to_float(b[size_t((g * b_rows + j) * k + x)]);
    ASSERT_NEAR(got, s, std::ldexp(std::fabs(s), -7) + 1e-3) << "row " << r << " col " << j;
  }
}

// A [m, k], group 0 of B [n, k] and D [m, n], bf16 row-major: the operands of a grouped source.
struct Bf16Operands {
  dga::layout::MatrixRef a, b;
  dga::block::EpilogueArgs e;
};
Bf16Operands bf16_operands(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, std::vector<uint16_t>& d,
                           int64_t m, int64_t n, int64_t k) {
  return {.a = {.base = a.data(), .origin = 0, .rows = m, .cols = k, .row_stride = k, .col_stride = 1, .bits = 16},
          .b = {.base = b.data(), .origin = 0, .rows = n, .cols = k, .row_stride = k, .col_stride = 1, .bits = 16},
          .e = {{.base = d.data(), .origin = 0, .rows = m, .cols = n, .row_stride = n, .col_stride = 1, .bits = 16},
                DType::kBF16, {}, false}};
}

}  // namespace

TEST(GemmProblems, ContiguousChunksFollowThePerRowGroupIds) {
  const int64_t m = 640, n = 80, k = 96, groups = 3, align = 128;
  std::vector<int32_t> ids(size_t(m), -1);
  auto fill = [&](int64_t r0, int64_t r1, int32_t g) { for (int64_t r = r0; r < r1; ++r) ids[size_t(r)] = g; };
  fill(0, 200, 0);    // a group over a whole chunk and part of the next
  fill(256, 384, 2);  // exactly one chunk; rows 384-511 are a chunk of padding
  fill(512, 601, 1);  // a partial last chunk
  const auto a = dga_test::random_bf16(size_t(m * k), 1), b = dga_test::random_bf16(size_t(groups * n * k), 2);
  std::vector<uint16_t> d(size_t(m * n), kPoisonBf16);
  const Bf16Operands o = bf16_operands(a, b, d, m, n, k);
  const dga::kernel::ContiguousProblems<dga::kernel::HostRows> problems{
      .a = o.a, .b = o.b, .e = o.e, .b_group = n * k, .groups = groups, .align = align, .ids = {ids.data()}};
  ASSERT_EQ(problems.count(), 5);
  EXPECT_EQ(problems.get(1).a.rows, 128);  // rows 128-199 of group 0 and its padding rows 200-255 (upstream)
  EXPECT_EQ(problems.get(3).a.rows, 0);    // a chunk that starts with padding
  EXPECT_EQ(problems.get(4).a.rows, 128);  // rows 512-600 of group 1 and its padding to the chunk's end
  run(problems);
  // A chunk's rows take the group of its first row (padding rows of a group too); chunks of padding untouched.
  for (int64_t r = 0; r < m; ++r) expect_row(d, r, ids[size_t(r / align * align)], a, b, n, k, n);
}

// Windows of `run` rows: a tile spans the chunks of one group up to the window's end, never two groups.
TEST(GemmProblems, ContiguousRunsSpanAGroupsChunksWithinAWindow) {
  const int64_t m = 640, n = 48, k = 64, groups = 2, align = 128;
  std::vector<int32_t> ids(size_t(m), -1);
  for (int64_t r = 0; r < 420; ++r) ids[size_t(r)] = 0;    // chunks 0-3, padding rows 420-511
  for (int64_t r = 512; r < 601; ++r) ids[size_t(r)] = 1;  // chunk 4
  const auto a = dga_test::random_bf16(size_t(m * k), 7), b = dga_test::random_bf16(size_t(groups * n * k), 8);
  for (const auto& [window, rows] : {std::pair{int64_t(256), std::vector<int64_t>{256, 0, 256, 0, 128}},
                                    std::pair{int64_t(384), std::vector<int64_t>{384, 0, 0, 128, 128}},
                                    std::pair{int64_t(0), std::vector<int64_t>{128, 128, 128, 128, 128}}}) {
    std::vector<uint16_t> d(size_t(m * n), kPoisonBf16);
    const Bf16Operands o = bf16_operands(a, b, d, m, n, k);
    const dga::kernel::ContiguousProblems<dga::kernel::HostRows> problems{
        .a = o.a, .b = o.b, .e = o.e, .b_group = n * k, .groups = groups, .align = align, .ids = {ids.data()}, .run = window};
    for (int64_t c = 0; c < problems.count(); ++c)
      EXPECT_EQ(problems.get(c).a.rows, rows[size_t(c)]) << "run " << window << ", chunk " << c;
    run(problems);
    for (int64_t r = 0; r < m; ++r) expect_row(d, r, ids[size_t(r / align * align)], a, b, n, k, n);
  }
}

TEST(GemmProblems, PsumRunsEndAtTheGroupOrTheWindow) {
  const std::vector<int32_t> ends{200, 200, 380, 560};
  const int64_t n = 16, k = 32;
  const auto a = dga_test::random_bf16(size_t(600 * k), 9), b = dga_test::random_bf16(size_t(4 * n * k), 10);
  std::vector<uint16_t> d(size_t(600 * n), kPoisonBf16);
  const Bf16Operands o = bf16_operands(a, b, d, 600, n, k);
  const dga::kernel::PsumProblems<dga::kernel::HostRows> problems{
      .a = o.a, .b = o.b, .e = o.e, .b_group = n * k, .groups = 4, .align = 128, .ends = {ends.data()}, .run = 256};
  const std::vector<int64_t> rows{200, 0, 124, 128, 48};  // group 3 splits at the window boundary 512
  for (int64_t c = 0; c < problems.count(); ++c) EXPECT_EQ(problems.get(c).a.rows, rows[size_t(c)]) << c;
}

TEST(GemmProblems, MaskedGroupsReadTheirCountsWhenTheKernelRuns) {
  const int64_t g = 4, m = 70, n = 48, k = 64;
  const std::vector<int32_t> masked{70, 0, 33, 99};  // 99 > M is clamped to M by the source
  const auto a = dga_test::random_bf16(size_t(g * m * k), 3), b = dga_test::random_bf16(size_t(g * n * k), 4);
  std::vector<uint16_t> d(size_t(g * m * n), kPoisonBf16);
  const dga::kernel::MaskedProblems<dga::kernel::HostRows> problems{
      .a = {.base = a.data(), .origin = 0, .rows = m, .cols = k, .row_stride = k, .col_stride = 1, .bits = 16},
      .b = {.base = b.data(), .origin = 0, .rows = n, .cols = k, .row_stride = k, .col_stride = 1, .bits = 16},
      .e = {{.base = d.data(), .origin = 0, .rows = m, .cols = n, .row_stride = n, .col_stride = 1,
             .bits = 16}, DType::kBF16, {}, false},
      .a_group = m * k, .b_group = n * k, .d_group = m * n, .groups = g, .rows = {masked.data()}};
  EXPECT_EQ(problems.get(3).a.rows, m);
  run(problems);
  for (int64_t x = 0; x < g; ++x) {
    const int64_t rows = std::min<int64_t>(masked[size_t(x)], m);
    for (int64_t r = 0; r < m; ++r)
      expect_row(d, x * m + r, r < rows ? x : -1, a, b, n, k, n);
  }
}

TEST(GemmProblems, PsumChunksFindTheirGroupByTheEndOffsets) {
  const int64_t m = 600, n = 40, k = 64, groups = 4, align = 128;
  const std::vector<int32_t> ends{200, 200, 380, 560};  // group 1 is empty; rows 560-599 belong to no group
  std::vector<int32_t> ids(size_t(m), -1);
  for (int64_t g = 0, prev = 0; g < groups; prev = ends[size_t(g)], ++g)
    for (int64_t r = (prev + align - 1) / align * align; r < ends[size_t(g)]; ++r) ids[size_t(r)] = int32_t(g);
  const auto a = dga_test::random_bf16(size_t(m * k), 5), b = dga_test::random_bf16(size_t(groups * n * k), 6);
  std::vector<uint16_t> d(size_t(m * n), kPoisonBf16);
  const Bf16Operands o = bf16_operands(a, b, d, m, n, k);
  const dga::kernel::PsumProblems<dga::kernel::HostRows> problems{
      .a = o.a, .b = o.b, .e = o.e, .b_group = n * k, .groups = groups, .align = align, .ends = {ends.data()}};
  ASSERT_EQ(problems.count(), 5);
  EXPECT_EQ(problems.get(2).a.rows, 124);  // group 2 from its aligned start 256 to its end 380
  EXPECT_EQ(problems.get(4).a.rows, 48);
  run(problems);
  for (int64_t r = 0; r < m; ++r) expect_row(d, r, ids[size_t(r)], a, b, n, k, n);
}

// K-grouped (the "tn" layout): A [sum K, M] and B [sum K, N] are MN-major; group g adds A_g^T B_g over
// its K range to C[g] (here D is C: fp32, accumulated in place). Ends 96, 96, 200 with alignment 64:
// group 1 is empty, group 2 covers [128, 200) (a gap before, a K tail after).
TEST(GemmProblems, KGroupedRangesFollowTheEndOffsets) {
  const int64_t m = 40, n = 72, sum_k = 200, align = 64;
  const std::vector<int32_t> ends{96, 96, 200};
  const int64_t groups = int64_t(ends.size());
  const auto a = dga_test::random_bf16(size_t(sum_k * m), 5), b = dga_test::random_bf16(size_t(sum_k * n), 6);
  std::vector<float> d(size_t(groups * m * n));
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(int(i % 7) - 3);  // C, nonzero
  const std::vector<float> c = d;
  const dga::layout::MutMatrixRef dm{.base = d.data(), .origin = 0, .rows = m, .cols = n, .row_stride = n,
                                     .col_stride = 1, .bits = 32};
  const dga::kernel::KGroupedProblems<dga::kernel::HostRows> problems{
      .a = {.base = a.data(), .origin = 0, .rows = m, .cols = sum_k, .row_stride = 1, .col_stride = m, .bits = 16},
      .b = {.base = b.data(), .origin = 0, .rows = n, .cols = sum_k, .row_stride = 1, .col_stride = n, .bits = 16},
      .e = {dm, DType::kFP32, {.base = d.data(), .origin = 0, .rows = m, .cols = n, .row_stride = n, .col_stride = 1,
                               .bits = 32}, true},
      .d_group = m * n, .c_group = m * n, .groups = groups, .align = align, .ends = {ends.data()}};
  EXPECT_EQ(problems.get(1).a.rows, 0);   // empty: no tiles
  EXPECT_EQ(problems.get(2).a.cols, 72);  // [128, 200): rows 96-127 are a gap
  run(problems);
  int64_t start = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t end = ends[size_t(g)];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = c[size_t((g * m + i) * n + j)];
        for (int64_t x = start; x < end; ++x)
          s += double(dga::core::bf16_to_float(a[size_t(x * m + i)])) * dga::core::bf16_to_float(b[size_t(x * n + j)]);
        ASSERT_NEAR(d[size_t((g * m + i) * n + j)], s, 1e-4 * std::fabs(s) + 1e-3) << g << " " << i << " " << j;
      }
    start = (end + align - 1) / align * align;
  }
}
