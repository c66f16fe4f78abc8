// The NPU GEMM kernel (the shared templates on the AscendC primitive layer, cpp/kernels/ascend, as the
// .asc entries launch them) compiled with the host compiler against the devkit's headers in CPU-debug
// mode and run on the instruction model (npu_model/), core after core, against a double reference. Every
// core's flags are checked (set twice, wait without set, left set). Our reading of the documentation,
// not the 950.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "npu_gemm_launch.hpp"
#include "model_types.h"

#include "deepgemm_ascend/core/convert.hpp"
#include "model_runner.hpp"

namespace core = deepgemm_ascend::core;
namespace npu = deepgemm_ascend::tile::npu;

namespace {

struct Shape {
  int64_t m, n, k;
  bool a_mn_major, b_mn_major;  // "t" A ([K, M] stored) / "n" B ([K, N] stored)
  bool fp32_out, with_c;
  int cores;
  int64_t block_m, block_n, block_k, l0_k;
};

DgaMatrix matrix(const void* p, int64_t rows, int64_t cols, bool mn_major) {
  return {uint64_t(uintptr_t(p)), rows, cols, mn_major ? 1 : cols, mn_major ? rows : 1};
}

// Runs the BF16 GEMM on the model and returns the number of elements outside one bf16 ulp (fp32 D: 1e-5).
int64_t run_bf16(const Shape& s) {
  std::mt19937 rng(uint32_t(s.m * 7 + s.n * 3 + s.k));
  std::normal_distribution<float> nd;
  std::vector<uint16_t> a(size_t(s.m * s.k)), b(size_t(s.n * s.k));
  for (auto& v : a) v = core::float_to_bf16(nd(rng));
  for (auto& v : b) v = core::float_to_bf16(nd(rng));
  // A(i, x) and B(j, x) of the logical [M, K] and [N, K] operands, stored K- or MN-major.
  auto av = [&](int64_t i, int64_t x) { return core::bf16_to_float(a[size_t(s.a_mn_major ? x * s.m + i : i * s.k + x)]); };
  auto bv = [&](int64_t j, int64_t x) { return core::bf16_to_float(b[size_t(s.b_mn_major ? x * s.n + j : j * s.k + x)]); };
  std::vector<float> d32(size_t(s.m * s.n), NAN), c(size_t(s.m * s.n));
  std::vector<uint16_t> d16(size_t(s.m * s.n), 0x7FC0);
  for (size_t i = 0; i < c.size(); ++i) c[i] = float(int(i % 5) - 2);
  if (s.with_c) d32 = c;  // the launcher has copied C into D; the kernel adds the product to D
  DgaGemmParams p{};
  p.a = matrix(a.data(), s.m, s.k, s.a_mn_major);
  p.b = matrix(b.data(), s.n, s.k, s.b_mn_major);
  p.d = {uint64_t(uintptr_t(s.fp32_out ? static_cast<void*>(d32.data()) : d16.data())), s.m, s.n, s.n, 1};
  p.d_dtype = int32_t(s.fp32_out ? core::DType::kFP32 : core::DType::kBF16);
  p.has_c = s.with_c ? 1 : 0;
  p.block_m = s.block_m, p.block_n = s.block_n, p.block_k = s.block_k, p.l0_k = s.l0_k;
  p.swizzle_band = 2, p.swizzle_along_m = 1;
  block_num = s.cores;
  for (int core_id = 0; core_id < s.cores; ++core_id) {
    block_idx = core_id;
    dga_model::begin_core("dga_gemm_bf16", core_id);
    npu::run_gemm<bfloat16_t>(p);
    dga_model::end_core();
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double want = s.with_c ? c[size_t(i * s.n + j)] : 0.0;
      for (int64_t x = 0; x < s.k; ++x) want += double(av(i, x)) * bv(j, x);
      const double got = s.fp32_out ? d32[size_t(i * s.n + j)] : core::bf16_to_float(d16[size_t(i * s.n + j)]);
      const double tol = s.fp32_out ? 1e-5 * (std::fabs(want) + 1) : std::ldexp(std::fabs(want), -7) + 1e-3;
      bad += !(std::fabs(got - want) <= tol);
    }
  return bad;
}

}  // namespace

TEST(NpuKernelsOnModel, Bf16GemmMatchesTheReference) {
  const Shape shapes[] = {
      {40, 24, 70, false, false, false, false, 1, 64, 64, 64, 32},      // the documentation's m 40, k 70
      {1, 16, 32, false, false, false, false, 1, 64, 64, 64, 32},       // M = 1 (GEMV off)
      {300, 200, 300, false, false, false, false, 3, 64, 64, 64, 32},   // tiles, K tail, three cores
      {129, 257, 1000, false, false, true, false, 2, 128, 128, 128, 64}, // fp32 D
      {96, 80, 200, true, false, false, false, 2, 64, 64, 64, 64},      // tn: A MN-major (DN2NZ)
      {96, 80, 200, false, true, false, false, 2, 64, 64, 64, 64},      // nn: B MN-major
      {70, 50, 130, true, true, true, true, 2, 64, 64, 64, 32},         // tt, fp32 D += product (C)
  };
  for (const Shape& s : shapes)
    EXPECT_EQ(run_bf16(s), 0) << s.m << "x" << s.n << "x" << s.k << " a_mn " << s.a_mn_major << " b_mn "
                              << s.b_mn_major << " fp32 " << s.fp32_out << " c " << s.with_c;
}
