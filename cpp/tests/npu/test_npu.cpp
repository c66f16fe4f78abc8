// On-device suite (ctest label `npu`): runs on a machine with an Ascend 950 and a CANN build
// (scripts/npu_validate.sh); everywhere else every case is skipped with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/kernel/npu_params.hpp"
#include "deepgemm_ascend/runtime/acl_backend.hpp"
#include "reference.hpp"

#ifdef DGA_WITH_NPU
#include "acl/acl.h"
#endif

namespace dga = deepgemm_ascend;

// GTEST_SKIP returns from the enclosing function, so this stays a macro.
#define DGA_REQUIRE_NPU_DEVICE()                                                            \
  do {                                                                                      \
    const std::string why = dga::runtime::npu_unavailable_reason();                         \
    if (!why.empty()) GTEST_SKIP() << "no NPU to run on: " << why;                          \
  } while (0)

TEST(NpuDevice, CoreCountIsReported) {
  DGA_REQUIRE_NPU_DEVICE();
  EXPECT_GT(dga::runtime::npu_cube_cores(0), 0);
}

TEST(NpuGemm, Bf16MatchesTheHostBackendWithinOneUlp) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  const int64_t m = 1000, n = 700, k = 4096;
  std::mt19937 rng(0);
  std::normal_distribution<float> nd;
  std::vector<uint16_t> a(size_t(m * k)), b(size_t(n * k)), d(size_t(m * n)), ref(size_t(m * n));
  for (auto& v : a) v = dga::core::float_to_bf16(nd(rng));
  for (auto& v : b) v = dga::core::float_to_bf16(nd(rng));
  void *da = nullptr, *db = nullptr, *dd = nullptr;
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&da, a.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&db, b.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&dd, d.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  aclrtMemcpy(da, a.size() * 2, a.data(), a.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemcpy(db, b.size() * 2, b.data(), b.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE);
  namespace h = dga::heuristics;
  const auto limits = h::ArchLimits::of<dga::arch::Ascend950>();
  const int cores = dga::runtime::npu_cube_cores(0);
  const h::GemmConfig c = h::select_gemm_config(h::npu_gemm_desc(m, n, k, 16, 16, 2, cores), limits);
  const DgaGemmParams p{{uint64_t(da), m, k, k, 1}, {uint64_t(db), n, k, k, 1}, {uint64_t(dd), m, n, n, 1},
                        int32_t(dga::core::DType::kBF16), 0, c.tiling.block_m, c.tiling.block_n, c.tiling.block_k,
                        c.tiling.l0_k, c.swizzle.band, c.swizzle.along_m ? 1 : 0};
  dga::runtime::npu_launch(0, "dga_npu_launch_gemm_bf16", unsigned(c.num_blocks), nullptr, &p);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  aclrtMemcpy(d.data(), d.size() * 2, dd, d.size() * 2, ACL_MEMCPY_DEVICE_TO_HOST);
  auto view = [](void* ptr, int64_t r, int64_t cdim) {
    return dga_test::view2d(ptr, dga::core::DType::kBF16, r, cdim, cdim, 1);
  };
  dga::bf16_gemm_nt(view(a.data(), m, k), view(b.data(), n, k), view(ref.data(), m, n));
  // Both accumulate in fp32; the cube's summation order differs from the host's, so compare within
  // one bf16 ulp rather than bitwise.
  int64_t bad = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const float x = dga::core::bf16_to_float(d[i]), y = dga::core::bf16_to_float(ref[i]);
    bad += std::fabs(x - y) > std::ldexp(std::fabs(y), -7) + 1e-3f;
  }
  EXPECT_EQ(bad, 0);
  aclrtFree(da);
  aclrtFree(db);
  aclrtFree(dd);
#endif
}

#ifdef DGA_WITH_NPU
namespace {

// A contiguous tensor of `shape` on NPU 0 (or on the host with `host`).
dga::core::TensorView tensor(void* p, dga::core::DType dt, std::vector<int64_t> shape, bool host = false) {
  dga::core::TensorView v = dga_test::contiguous(p, dt, shape);
  if (!host) v.device = {dga::core::DeviceKind::kNpu, 0};
  return v;
}

void* to_device(const void* host, size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  aclrtMemcpy(p, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  return p;
}

}  // namespace
#endif

TEST(NpuGemm, MaskedBf16MatchesTheHostBackendWithinOneUlp) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  using dga::core::DType;
  const int64_t g = 4, m = 96, n = 384, k = 512;
  const std::vector<int32_t> masked{96, 0, 17, 64};
  const auto a = dga_test::random_bf16(size_t(g * m * k), 1), b = dga_test::random_bf16(size_t(g * n * k), 2);
  std::vector<uint16_t> d(size_t(g * m * n), 0x7FC0), ref(d);  // NaN: rows past masked_m stay untouched
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  void* da = to_device(a.data(), a.size() * 2);
  void* db = to_device(b.data(), b.size() * 2);
  void* dd = to_device(d.data(), d.size() * 2);
  void* dm = to_device(masked.data(), masked.size() * 4);
  dga::m_grouped_gemm_masked(tensor(da, DType::kBF16, {g, m, k}), nullptr, tensor(db, DType::kBF16, {g, n, k}),
                             nullptr, tensor(dd, DType::kBF16, {g, m, n}), tensor(dm, DType::kInt32, {g}), 64);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  aclrtMemcpy(d.data(), d.size() * 2, dd, d.size() * 2, ACL_MEMCPY_DEVICE_TO_HOST);
  dga::m_grouped_gemm_masked(tensor(const_cast<uint16_t*>(a.data()), DType::kBF16, {g, m, k}, true), nullptr,
                             tensor(const_cast<uint16_t*>(b.data()), DType::kBF16, {g, n, k}, true), nullptr,
                             tensor(ref.data(), DType::kBF16, {g, m, n}, true),
                             tensor(const_cast<int32_t*>(masked.data()), DType::kInt32, {g}, true), 64);
  int64_t bad = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const float x = dga::core::bf16_to_float(d[i]), y = dga::core::bf16_to_float(ref[i]);
    bad += std::isnan(y) ? !std::isnan(x) : std::fabs(x - y) > std::ldexp(std::fabs(y), -7) + 1e-3f;
  }
  EXPECT_EQ(bad, 0);
  for (void* p : {da, db, dd, dm}) aclrtFree(p);
#endif
}
