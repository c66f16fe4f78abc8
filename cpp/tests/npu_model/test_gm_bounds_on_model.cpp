// The grouped BF16 GEMM launchers on the instruction model with device-resident sizes and ids that no host
// code checked (masked_m past M or negative, group ids past the groups, psum and K-grouped end offsets that
// are negative, decreasing or huge), under the model's GM bounds checker: every DMA of the launch must stay
// inside the tensors it was given (tight regions; guard bytes around them must keep their pattern), valid
// groups compute their rows exactly, and the rest of D keeps its poison. A planted out-of-bounds region
// shows that the checker fails. Our reading of the documentation, not the 950.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace core = deepgemm_ascend::core;
namespace runtime = deepgemm_ascend::runtime;

namespace {

constexpr uint16_t kPoison = 0x7FC0;  // bf16 NaN
constexpr uint8_t kGuardByte = 0xA5;
constexpr size_t kGuardBytes = 4096;

// n values of T between guard bands of kGuardBytes; region() is the values alone.
template <class T>
struct Guarded {
  std::string name;
  std::vector<uint8_t> bytes;
  size_t n;
  Guarded(std::string nm, size_t count)
      : name(std::move(nm)), bytes(count * sizeof(T) + 2 * kGuardBytes, kGuardByte), n(count) {}
  T* data() { return reinterpret_cast<T*>(bytes.data() + kGuardBytes); }
  T& operator[](size_t i) { return data()[i]; }
  uint64_t addr() { return uint64_t(uintptr_t(data())); }
  runtime::GmRegion region() { return {name, data(), n * sizeof(T)}; }
  bool guards_intact() const {
    for (size_t i = 0; i < kGuardBytes; ++i)
      if (bytes[i] != kGuardByte || bytes[bytes.size() - 1 - i] != kGuardByte) return false;
    return true;
  }
};

// Operands of the grouped GEMMs: A [a_rows, K], B [groups, N, K] (K-major bf16), D bf16 or fp32 (poisoned).
struct Operands {
  int64_t a_rows, n, k, groups;
  Guarded<uint16_t> a, b, d16;
  Guarded<float> d32;
  Operands(int64_t rows, int64_t n_, int64_t k_, int64_t g, int64_t d_rows, uint32_t seed)
      : a_rows(rows), n(n_), k(k_), groups(g), a("a", size_t(rows * k_)), b("b", size_t(g * n_ * k_)),
        d16("d", size_t(d_rows * n_)), d32("d", size_t(d_rows * n_)) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd;
    for (size_t i = 0; i < a.n; ++i) a[i] = core::float_to_bf16(nd(rng));
    for (size_t i = 0; i < b.n; ++i) b[i] = core::float_to_bf16(nd(rng));
    for (size_t i = 0; i < d16.n; ++i) d16[i] = kPoison;
    for (size_t i = 0; i < d32.n; ++i) d32[i] = float(int(i % 7) - 3);  // K-grouped: C, accumulated into
  }
  // sum over x in [k0, k1) of A(row, x) B(group, col, x)
  double dot(int64_t row, int64_t g, int64_t col, int64_t k0, int64_t k1) {
    double s = 0;
    for (int64_t x = k0; x < k1; ++x)
      s += double(core::bf16_to_float(a[size_t(row * k + x)])) * core::bf16_to_float(b[size_t((g * n + col) * k + x)]);
    return s;
  }
  bool row_is(int64_t d_row, int64_t a_row, int64_t g) {  // D row (bf16) == A row @ B[g]^T
    for (int64_t j = 0; j < n; ++j) {
      const double want = dot(a_row, g, j, 0, k);
      const double got = core::bf16_to_float(d16[size_t(d_row * n + j)]);
      if (!(std::fabs(got - want) <= std::ldexp(std::fabs(want), -7) + 1e-3)) return false;
    }
    return true;
  }
  bool row_poisoned(int64_t d_row) {
    for (int64_t j = 0; j < n; ++j)
      if (d16[size_t(d_row * n + j)] != kPoison) return false;
    return true;
  }
  bool guards_intact() const {
    return a.guards_intact() && b.guards_intact() && d16.guards_intact() && d32.guards_intact();
  }
};

DgaGemmParams gemm(Operands& o, int64_t rows, bool fp32_d) {
  DgaGemmParams p{};
  p.a = {.addr = o.a.addr(), .rows = rows, .cols = o.k, .row_stride = o.k, .col_stride = 1};
  p.b = {.addr = o.b.addr(), .rows = o.n, .cols = o.k, .row_stride = o.k, .col_stride = 1};
  p.d = {.addr = fp32_d ? o.d32.addr() : o.d16.addr(), .rows = rows, .cols = o.n, .row_stride = o.n, .col_stride = 1};
  p.d_dtype = int32_t(fp32_d ? core::DType::kFP32 : core::DType::kBF16);
  p.block_m = 64, p.block_n = 64, p.block_k = 64, p.l0_k = 32;
  p.swizzle_band = 2, p.swizzle_along_m = 1;
  return p;
}

// The BF16 contiguous launcher over `layout` (per-row ids, or with psum the groups' end offsets), A's rows
// in chunks of `align`, tiles of block_m rows.
void launch_contiguous(Operands& o, Guarded<int32_t>& layout, int64_t align, bool psum, int64_t block_m = 64) {
  DgaContiguousGemmParams p{.gemm = gemm(o, o.a_rows, false), .b_group = o.n * o.k, .groups = o.groups,
                            .align = align, .sfb_group = 0, .grouped_layout = layout.addr(), .psum = psum ? 1 : 0};
  p.gemm.block_m = block_m;
  runtime::npu_model_launch("dga_npu_launch_gemm_bf16_contiguous", 2, &p,
                            {o.a.region(), o.b.region(), o.d16.region(), layout.region()});
}

// Masked: group g's first clamp(masked_m[g], 0, M) rows are computed, the rest keep the poison.
TEST(NpuBoundsOnModel, MaskedGemmClampsMaskedM) {
  const int64_t g = 4, m = 40;
  Operands o(g * m, 48, 96, g, g * m, 11);
  Guarded<int32_t> masked("masked_m", size_t(g));
  const int32_t counts[] = {-7, 999, 17, INT32_MAX};
  for (int64_t i = 0; i < g; ++i) masked[size_t(i)] = counts[i];
  DgaMaskedGemmParams p{.gemm = gemm(o, m, false), .a_group = m * o.k, .b_group = o.n * o.k, .d_group = m * o.n,
                        .groups = g, .sfa_group = 0, .sfb_group = 0, .masked_m = masked.addr()};
  runtime::npu_model_launch("dga_npu_launch_gemm_bf16_masked", 2, &p,
                            {o.a.region(), o.b.region(), o.d16.region(), masked.region()});
  for (int64_t gi = 0; gi < g; ++gi) {
    const int64_t valid = std::min<int64_t>(std::max(counts[gi], 0), m);
    for (int64_t r = 0; r < m; ++r) {
      const int64_t row = gi * m + r;
      EXPECT_TRUE(r < valid ? o.row_is(row, row, gi) : o.row_poisoned(row)) << "group " << gi << " row " << r;
    }
  }
  EXPECT_TRUE(o.guards_intact() && masked.guards_intact());
}

// Per-row ids: a chunk of `align` rows is computed with the group of its first row when that id is in
// [0, groups); a chunk whose first id is -1, negative or past the groups is left alone.
TEST(NpuBoundsOnModel, ContiguousGemmSkipsIdsOutsideTheGroups) {
  const int64_t g = 3, align = 32, chunks = 6, m = chunks * align;
  Operands o(m, 40, 64, g, m, 12);
  Guarded<int32_t> ids("grouped_layout", size_t(m));
  const int32_t first[chunks] = {1, -1, 7, -5, 2, INT32_MIN};
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t r = 0; r < align; ++r) ids[size_t(c * align + r)] = r < 20 ? first[c] : -1;
  launch_contiguous(o, ids, align, false);
  for (int64_t c = 0; c < chunks; ++c) {
    const bool valid = first[c] >= 0 && first[c] < g;
    for (int64_t r = c * align; r < (c + 1) * align; ++r)
      EXPECT_TRUE(valid ? o.row_is(r, r, first[c]) : o.row_poisoned(r)) << "chunk " << c << " row " << r;
  }
  EXPECT_TRUE(o.guards_intact() && ids.guards_intact());
}

// Tiles of 96 rows over chunks of 32: a tile spans a group's chunks up to the 96-row window's end, and a
// group that starts inside a window starts a tile there (the run windows of kernel/gemm_problems.hpp).
TEST(NpuBoundsOnModel, ContiguousTilesSpanAGroupsChunksNeverTwoGroups) {
  const int64_t g = 3, align = 32, chunks = 8, m = chunks * align;
  Operands o(m, 40, 64, g, m, 15);
  Guarded<int32_t> ids("grouped_layout", size_t(m));
  const int32_t of_chunk[chunks] = {0, 1, 1, 1, 1, -1, 2, 2};
  for (int64_t r = 0; r < m; ++r) ids[size_t(r)] = of_chunk[r / align];
  launch_contiguous(o, ids, align, false, 96);
  for (int64_t r = 0; r < m; ++r) {
    const int32_t gi = of_chunk[r / align];
    EXPECT_TRUE(gi >= 0 ? o.row_is(r, r, gi) : o.row_poisoned(r)) << "row " << r;
  }
  EXPECT_TRUE(o.guards_intact() && ids.guards_intact());
}

TEST(NpuBoundsOnModel, PsumTilesEndAtTheGroupsEnd) {
  const int64_t g = 3, align = 32, m = 8 * align;
  Operands o(m, 40, 64, g, m, 16);
  Guarded<int32_t> ends("grouped_layout", size_t(g));
  const int32_t end_of[g] = {40, 200, 230};  // group 1 from 64, group 2 from 224; the rest are gaps
  for (int64_t i = 0; i < g; ++i) ends[size_t(i)] = end_of[i];
  launch_contiguous(o, ends, align, true, 96);
  for (int64_t r = 0; r < m; ++r) {
    const int gi = r < 40 ? 0 : r >= 64 && r < 200 ? 1 : r >= 224 && r < 230 ? 2 : -1;
    EXPECT_TRUE(gi >= 0 ? o.row_is(r, r, gi) : o.row_poisoned(r)) << "row " << r;
  }
  EXPECT_TRUE(o.guards_intact() && ends.guards_intact());
}

// Psum end offsets that are not non-decreasing, negative or past M: no access outside the tensors, and
// every row the kernel writes is its A row times one group's B.
TEST(NpuBoundsOnModel, PsumGemmStaysInsideOnGarbageEnds) {
  const int64_t g = 5, align = 32, m = 7 * align;
  const std::vector<std::vector<int32_t>> cases = {
      {50, -3, 1 << 30, 10, -100}, {INT32_MIN, INT32_MAX, 0, 0, 5}, {224, 224, 96, 500, 64}, {-1, -1, -1, -1, -1}};
  for (const auto& ends_v : cases) {
    Operands o(m, 32, 64, g, m, 13);
    Guarded<int32_t> ends("grouped_layout", size_t(g));
    for (int64_t i = 0; i < g; ++i) ends[size_t(i)] = ends_v[size_t(i)];
    launch_contiguous(o, ends, align, true);
    for (int64_t r = 0; r < m; ++r) {
      bool ok = o.row_poisoned(r);
      for (int64_t gi = 0; gi < g && !ok; ++gi) ok = o.row_is(r, r, gi);
      EXPECT_TRUE(ok) << "row " << r << " ends " << ends_v[0] << ", " << ends_v[1] << ", ...";
    }
    EXPECT_TRUE(o.guards_intact() && ends.guards_intact());
  }
}

// K-grouped end offsets outside [0, sum K] (negative, decreasing, huge) are clamped to it: group g adds
// A[:, s:e] B[:, s:e]^T to D[g] = C[g] with e = clamp(ends[g]) and s = clamp(align_up(ends[g - 1])).
TEST(NpuBoundsOnModel, KGroupedGemmClampsEnds) {
  const int64_t g = 4, m = 24, n = 40, align = 32, sum_k = 6 * align;
  const std::vector<std::vector<int32_t>> cases = {
      {-1000, 96, 1 << 30, 64}, {192, 0, -5, 192}, {INT32_MIN, INT32_MIN, INT32_MAX, INT32_MAX}};
  for (const auto& ends_v : cases) {
    // B's groups are one [N, sum K] matrix here (group 0): the kernel splits A and B along K.
    Operands o(m, n, sum_k, 1, g * m, 14);
    Guarded<int32_t> ends("ends", size_t(g));
    for (int64_t i = 0; i < g; ++i) ends[size_t(i)] = ends_v[size_t(i)];
    std::vector<float> c(o.d32.data(), o.d32.data() + o.d32.n);
    DgaKGroupedGemmParams p{.gemm = gemm(o, m, true), .d_group = m * n, .groups = g, .align = align,
                            .ends = ends.addr()};
    p.gemm.has_c = 1;
    runtime::npu_model_launch("dga_npu_launch_gemm_bf16_k_grouped", 2, &p,
                              {o.a.region(), o.b.region(), o.d32.region(), ends.region()});
    const auto clamp = [&](int64_t v) { return std::min<int64_t>(std::max<int64_t>(v, 0), sum_k); };
    for (int64_t gi = 0; gi < g; ++gi) {
      const int64_t s = gi == 0 ? 0 : clamp((int64_t(ends_v[size_t(gi - 1)]) + align - 1) / align * align);
      const int64_t e = clamp(ends_v[size_t(gi)]);
      int64_t bad = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const size_t at = size_t((gi * m + i) * n + j);
          const double want = c[at] + (e > s ? o.dot(i, 0, j, s, e) : 0.0);
          bad += !(std::fabs(o.d32[at] - want) <= 1e-5 * (std::fabs(want) + 1));
        }
      EXPECT_EQ(bad, 0) << "group " << gi << " K range [" << s << ", " << e << ")";
    }
    EXPECT_TRUE(o.guards_intact() && ends.guards_intact());
  }
}

// The checker itself: a region one row short of what the dense kernel legitimately reads must fail the
// launch, naming the access.
TEST(NpuBoundsOnModel, TheCheckerReportsAnAccessOutsideTheRegions) {
  const int64_t m = 40;
  Operands o(m, 24, 64, 1, m, 15);
  DgaGemmParams p = gemm(o, m, false);
  runtime::GmRegion short_a = o.a.region();
  short_a.bytes -= size_t(o.k) * sizeof(uint16_t);
  try {
    runtime::npu_model_launch("dga_npu_launch_gemm_bf16", 1, &p, {short_a, o.b.region(), o.d16.region()});
    FAIL() << "the launch read A's last row outside its region and passed";
  } catch (const core::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("outside every GM region of the launch"), std::string::npos) << what;
    EXPECT_NE(what.find("reads GM bytes"), std::string::npos) << what;
    EXPECT_NE(what.find(" of a, "), std::string::npos) << what;
  }
  // The same launch with A's whole region passes.
  EXPECT_NO_THROW(
      runtime::npu_model_launch("dga_npu_launch_gemm_bf16", 1, &p, {o.a.region(), o.b.region(), o.d16.region()}));
  EXPECT_TRUE(o.row_is(m - 1, m - 1, 0));
}

}  // namespace
