// End-to-end BF16 GEMM through the C++ API against a double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
using dga::core::DType;
using dga_test::view2d;

namespace {

struct GemmCase {
  int64_t m, n, k;
  std::string layout;
  bool fp32_out, with_c;
};

// Runs one case; returns calc_diff against the float64 reference and checks the element tolerance.
double run_case(const GemmCase& cs) {
  const int64_t m = cs.m, n = cs.n, k = cs.k;
  auto a = dga_test::random_bf16(size_t(m * k), 1), b = dga_test::random_bf16(size_t(n * k), 2);
  // Logical A[m][k] and B[n][k]; storage follows the layout letters.
  const bool ta = cs.layout[0] == 't', tb = cs.layout[1] == 'n';
  auto A = [&](int64_t i, int64_t j) { return dga::core::bf16_to_float(ta ? a[size_t(j * m + i)] : a[size_t(i * k + j)]); };
  auto B = [&](int64_t i, int64_t j) { return dga::core::bf16_to_float(tb ? b[size_t(j * n + i)] : b[size_t(i * k + j)]); };
  auto va = ta ? view2d(a.data(), DType::kBF16, k, m, m, 1) : view2d(a.data(), DType::kBF16, m, k, k, 1);
  auto vb = tb ? view2d(b.data(), DType::kBF16, k, n, n, 1) : view2d(b.data(), DType::kBF16, n, k, k, 1);

  std::vector<double> ref(size_t(m * n)), got(size_t(m * n));
  std::vector<float> c32(size_t(m * n)), d32(size_t(m * n), NAN);
  std::vector<uint16_t> c16(size_t(m * n)), d16(size_t(m * n), 0x7FC0);
  auto cvals = dga_test::random_bf16(size_t(m * n), 3);
  for (size_t i = 0; i < c32.size(); ++i) {
    c16[i] = cvals[i];
    c32[i] = 4 * dga::core::bf16_to_float(cvals[i]);
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) s += double(A(i, l)) * double(B(j, l));
      if (cs.with_c) s += cs.fp32_out ? c32[size_t(i * n + j)] : dga::core::bf16_to_float(c16[size_t(i * n + j)]);
      ref[size_t(i * n + j)] = s;
    }
  const DType dt = cs.fp32_out ? DType::kFP32 : DType::kBF16;
  void* dp = cs.fp32_out ? static_cast<void*>(d32.data()) : d16.data();
  void* cp = cs.fp32_out ? static_cast<void*>(c32.data()) : c16.data();
  auto vd = view2d(dp, dt, m, n, n, 1), vc = view2d(cp, dt, m, n, n, 1);
  dga::bf16_gemm(cs.layout, va, vb, vd, cs.with_c ? &vc : nullptr);
  for (size_t i = 0; i < got.size(); ++i) {
    got[i] = cs.fp32_out ? d32[i] : dga::core::bf16_to_float(d16[i]);
    const double tol = 1e-2 * (1 + std::fabs(ref[i])) + 1e-4 * std::sqrt(double(k));
    EXPECT_NEAR(got[i], ref[i], tol) << "element " << i;
    if (std::fabs(got[i] - ref[i]) > tol) break;
  }
  return dga_test::calc_diff(got, ref);
}

}  // namespace

class GemmCases : public ::testing::TestWithParam<std::tuple<std::tuple<int, int, int>, std::string, bool, bool>> {};

TEST_P(GemmCases, MatchesFloat64Reference) {
  const auto& [shape, layout, fp32_out, with_c] = GetParam();
  const auto [m, n, k] = shape;
  EXPECT_LT(run_case({.m = m, .n = n, .k = k, .layout = layout, .fp32_out = fp32_out, .with_c = with_c}), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmCases,
                         ::testing::Combine(::testing::Values(std::tuple{1, 64, 32}, std::tuple{17, 33, 15},
                                                              std::tuple{129, 257, 384}, std::tuple{64, 96, 1000}),
                                            ::testing::Values("nt", "nn", "tn", "tt"), ::testing::Bool(),
                                            ::testing::Bool()));

TEST(Gemm, EveryHostIsaAgrees) {
  for (auto isa : dga::tile::host::supported_host_isas()) {
    dga::tile::host::set_host_isa(isa);
    EXPECT_LT(run_case({.m = 70, .n = 50, .k = 300, .layout = "nt", .fp32_out = true,
                        .with_c = false}), 1e-5) << dga::tile::host::name(isa);
  }
  dga::tile::host::reset_host_isa();
}

TEST(Gemm, KZeroCopiesCOrZeroes) {
  std::vector<uint16_t> a(1), b(1);
  std::vector<float> c = {1, 2, 3, 4, 5, 6}, d(6, NAN);
  auto va = view2d(a.data(), DType::kBF16, 2, 0, 1, 1), vb = view2d(b.data(), DType::kBF16, 3, 0, 1, 1);
  auto vd = view2d(d.data(), DType::kFP32, 2, 3, 3, 1), vc = view2d(c.data(), DType::kFP32, 2, 3, 3, 1);
  dga::bf16_gemm_nt(va, vb, vd, &vc);
  EXPECT_EQ(d, c);
  dga::bf16_gemm_nt(va, vb, vd);
  EXPECT_EQ(d, std::vector<float>(6, 0.0f));
}

TEST(Gemm, MZeroIsANoOp) {
  std::vector<uint16_t> a(1), b(8, 0x3F80);
  std::vector<float> d(1, 7.0f);
  auto va = view2d(a.data(), DType::kBF16, 0, 4, 4, 1), vb = view2d(b.data(), DType::kBF16, 2, 4, 4, 1);
  auto vd = view2d(d.data(), DType::kFP32, 0, 2, 2, 1);
  dga::bf16_gemm_nt(va, vb, vd);
  EXPECT_EQ(d[0], 7.0f);
}

TEST(Gemm, BadInputsNameTheArgumentAndWriteNothing) {
  std::vector<uint16_t> a(64, 0x3F80), b(64, 0x3F80);
  std::vector<float> d(64, 5.0f);
  auto va = view2d(a.data(), DType::kBF16, 8, 8, 8, 1), vb = view2d(b.data(), DType::kBF16, 8, 8, 8, 1);
  auto vd = view2d(d.data(), DType::kFP32, 8, 8, 8, 1);
  auto expect_error = [&](const dga::TensorView& x, const dga::TensorView& y, const dga::TensorView& z,
                          dga::core::ErrorKind kind, const std::string& arg) {
    try {
      dga::bf16_gemm_nt(x, y, z);
      ADD_FAILURE() << "no error for " << arg;
    } catch (const dga::core::Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_EQ(e.arg(), arg) << e.what();
    }
    EXPECT_EQ(d, std::vector<float>(64, 5.0f));
  };
  auto wrong = va;
  wrong.dtype = DType::kFP16;
  expect_error(wrong, vb, vd, dga::core::ErrorKind::kType, "a");
  auto short_k = view2d(b.data(), DType::kBF16, 8, 4, 4, 1);
  expect_error(va, short_k, vd, dga::core::ErrorKind::kValue, "b");
  auto col_major = view2d(d.data(), DType::kFP32, 8, 8, 1, 8);
  expect_error(va, vb, col_major, dga::core::ErrorKind::kValue, "d");
  auto alias = view2d(a.data(), DType::kFP32, 8, 8, 8, 1);
  expect_error(va, vb, alias, dga::core::ErrorKind::kValue, "d");
}
