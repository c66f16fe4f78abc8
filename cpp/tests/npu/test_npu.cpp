// On-device suite (ctest label `npu`): runs on a machine with an Ascend 950 and a CANN build
// (scripts/npu_validate.sh); everywhere else every case is skipped with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/comm/mega_moe_layout.hpp"
#include "deepgemm_ascend/comm/peer_group.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
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
  const DgaScales none{0, 0, 0, 1, 0};
  const DgaGemmParams p{{uint64_t(da), m, k, k, 1}, {uint64_t(db), n, k, k, 1}, {uint64_t(dd), m, n, n, 1},
                        none, none, int32_t(dga::core::DType::kBF16), 0, c.tiling.block_m, c.tiling.block_n,
                        c.tiling.block_k, c.tiling.l0_k, c.swizzle.band, c.swizzle.along_m ? 1 : 0, 0};
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

// FP8 with fp32 block scales (the vector cores promote) and with UE8M0 MX scales (the MX cube), against
// the host backend on the same inputs (block: DeepSeek's (1, 128) x (128, 128) recipe).
TEST(NpuGemm, Fp8BlockAndMxScalesMatchTheHostBackend) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  using dga::core::DType;
  const int64_t m = 300, n = 520, k = 1024, kb = k / 128, kp = k / 64;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  std::uniform_int_distribution<int> ex(120, 130);
  std::vector<uint8_t> a(size_t(m * k)), b(size_t(n * k));
  for (auto& v : a) v = dga::core::float_to_e4m3(nd(rng));
  for (auto& v : b) v = dga::core::float_to_e4m3(nd(rng));
  std::vector<float> sa(size_t(m * kb)), sb(size_t(((n + 127) / 128) * kb));
  for (auto& v : sa) v = std::ldexp(1.0f + 0.25f * nd(rng) * nd(rng), -3);
  for (auto& v : sb) v = std::ldexp(1.0f, ex(rng) - 127);
  std::vector<int16_t> xa(size_t(m * kp)), xb(size_t(n * kp));  // UE8M0 pairs, K-major
  for (auto& v : xa) v = int16_t(ex(rng) | (ex(rng) << 8));
  for (auto& v : xb) v = int16_t(ex(rng) | (ex(rng) << 8));
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  void* da = to_device(a.data(), a.size());
  void* db = to_device(b.data(), b.size());
  struct Case {
    std::vector<void*> host;  // sfa, sfb
    std::vector<size_t> bytes;
    DType dt;
    std::vector<int64_t> sa_shape, sb_shape;
    dga::ScaleRecipe ra, rb;
  };
  const Case cases[] = {
      {{sa.data(), sb.data()}, {sa.size() * 4, sb.size() * 4}, DType::kFP32, {m, kb}, {(n + 127) / 128, kb}, {1, 128},
       {128, 128}},
      {{xa.data(), xb.data()}, {xa.size() * 2, xb.size() * 2}, DType::kInt16, {m, kp}, {n, kp}, {1, 32}, {1, 32}}};
  for (const Case& c : cases) {
    void* dsa = to_device(c.host[0], c.bytes[0]);
    void* dsb = to_device(c.host[1], c.bytes[1]);
    std::vector<uint16_t> d(size_t(m * n), 0x7FC0), ref(d);
    void* dd = to_device(d.data(), d.size() * 2);
    dga::fp8_fp4_gemm("nt", tensor(da, DType::kFP8E4M3, {m, k}), tensor(dsa, c.dt, c.sa_shape),
                      tensor(db, DType::kFP8E4M3, {n, k}), tensor(dsb, c.dt, c.sb_shape),
                      tensor(dd, DType::kBF16, {m, n}), nullptr, c.ra, c.rb);
    ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
    aclrtMemcpy(d.data(), d.size() * 2, dd, d.size() * 2, ACL_MEMCPY_DEVICE_TO_HOST);
    dga::fp8_fp4_gemm("nt", tensor(a.data(), DType::kFP8E4M3, {m, k}, true), tensor(c.host[0], c.dt, c.sa_shape, true),
                      tensor(b.data(), DType::kFP8E4M3, {n, k}, true), tensor(c.host[1], c.dt, c.sb_shape, true),
                      tensor(ref.data(), DType::kBF16, {m, n}, true), nullptr, c.ra, c.rb);
    int64_t bad = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      const float x = dga::core::bf16_to_float(d[i]), y = dga::core::bf16_to_float(ref[i]);
      bad += !(std::fabs(x - y) <= std::ldexp(std::fabs(y), -7) + 1e-3f * std::fabs(y) + 1e-6f);
    }
    EXPECT_EQ(bad, 0) << (c.dt == DType::kFP32 ? "block scales" : "MX scales");
    for (void* p : {dsa, dsb, dd}) aclrtFree(p);
  }
  for (void* p : {da, db}) aclrtFree(p);
#endif
}

// The HC pre-norm GEMM (the vector pass, then two K-grouped BF16 launches onto the zeroed D) against
// the host backend on the same inputs, split along K.
TEST(NpuHcPrenorm, MatchesTheHostBackend) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  using dga::core::DType;
  const int64_t m = 77, n = 24, k = 7168, s = 5;
  const auto a = dga_test::random_bf16(size_t(m * k), 4);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  std::vector<float> b(size_t(n * k));
  for (auto& v : b) v = nd(rng);
  std::vector<float> d(size_t(s * m * n), NAN), sq(size_t(s * m), NAN), ref_d(d), ref_sq(sq);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  void* da = to_device(a.data(), a.size() * 2);
  void* db = to_device(b.data(), b.size() * 4);
  void* dd = to_device(d.data(), d.size() * 4);
  void* dq = to_device(sq.data(), sq.size() * 4);
  dga::tf32_hc_prenorm_gemm(tensor(da, DType::kBF16, {m, k}), tensor(db, DType::kFP32, {n, k}),
                            tensor(dd, DType::kFP32, {s, m, n}), tensor(dq, DType::kFP32, {s, m}), s);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  aclrtMemcpy(d.data(), d.size() * 4, dd, d.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
  aclrtMemcpy(sq.data(), sq.size() * 4, dq, sq.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
  dga::tf32_hc_prenorm_gemm(tensor(const_cast<uint16_t*>(a.data()), DType::kBF16, {m, k}, true),
                            tensor(b.data(), DType::kFP32, {n, k}, true),
                            tensor(ref_d.data(), DType::kFP32, {s, m, n}, true),
                            tensor(ref_sq.data(), DType::kFP32, {s, m}, true), s);
  int64_t bad = 0;  // the same bf16 terms; only the fp32 summation orders differ
  for (size_t i = 0; i < d.size(); ++i) bad += !(std::fabs(d[i] - ref_d[i]) <= 1e-4f * (std::fabs(ref_d[i]) + 1.0f));
  for (size_t i = 0; i < sq.size(); ++i) bad += !(std::fabs(sq[i] - ref_sq[i]) <= 1e-5f * std::fabs(ref_sq[i]));
  EXPECT_EQ(bad, 0);
  for (void* p : {da, db, dd, dq}) aclrtFree(p);
#endif
}

// FP8 MQA logits (the mix kernel: cube scores, vector-side head reduction) against the host backend on the
// same inputs: inside each row's range within fp32 summation-order error, -inf outside.
TEST(NpuMqaLogits, Fp8MatchesTheHostBackend) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  using dga::core::DType;
  const int64_t s = 37, h = 64, d = 128, skv = 1000;
  std::mt19937 rng(6);
  std::normal_distribution<float> nd;
  std::vector<uint8_t> q(size_t(s * h * d)), kv(size_t(skv * d));
  for (auto& v : q) v = dga::core::float_to_e4m3(nd(rng));
  for (auto& v : kv) v = dga::core::float_to_e4m3(nd(rng));
  std::vector<float> w(size_t(s * h)), sf(size_t(skv), 0.05f);
  for (auto& v : w) v = nd(rng);
  std::vector<int32_t> ks(static_cast<size_t>(s)), ke(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    ks[size_t(i)] = int32_t(i * 7);
    ke[size_t(i)] = int32_t(std::min<int64_t>(skv, 400 + i * 13));
  }
  std::vector<float> out(size_t(s * skv), NAN), ref(out);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  void* dq = to_device(q.data(), q.size());
  void* dkv = to_device(kv.data(), kv.size());
  void* dw = to_device(w.data(), w.size() * 4);
  void* dsf = to_device(sf.data(), sf.size() * 4);
  void* dks = to_device(ks.data(), ks.size() * 4);
  void* dke = to_device(ke.data(), ke.size() * 4);
  void* dout = to_device(out.data(), out.size() * 4);
  dga::fp8_fp4_mqa_logits(tensor(dq, DType::kFP8E4M3, {s, h, d}), nullptr, tensor(dkv, DType::kFP8E4M3, {skv, d}),
                          tensor(dsf, DType::kFP32, {skv}), tensor(dw, DType::kFP32, {s, h}),
                          tensor(dks, DType::kInt32, {s}), tensor(dke, DType::kInt32, {s}),
                          tensor(dout, DType::kFP32, {s, skv}), true, false);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  aclrtMemcpy(out.data(), out.size() * 4, dout, out.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
  dga::fp8_fp4_mqa_logits(tensor(q.data(), DType::kFP8E4M3, {s, h, d}, true), nullptr,
                          tensor(kv.data(), DType::kFP8E4M3, {skv, d}, true),
                          tensor(sf.data(), DType::kFP32, {skv}, true),
                          tensor(w.data(), DType::kFP32, {s, h}, true), tensor(ks.data(), DType::kInt32, {s}, true),
                          tensor(ke.data(), DType::kInt32, {s}, true), tensor(ref.data(), DType::kFP32, {s, skv}, true),
                          true, false);
  int64_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i)
    bad += std::isinf(ref[i]) ? !(std::isinf(out[i]) && out[i] < 0)
                              : !(std::fabs(out[i] - ref[i]) <= 1e-4f * (std::fabs(ref[i]) + 1));
  EXPECT_EQ(bad, 0);
  for (void* p : {dq, dkv, dw, dsf, dks, dke, dout}) aclrtFree(p);
#endif
}

// Paged FP8 MQA logits (one problem per request page, lengths and pages read on the device) against the
// host backend on the same inputs: below each row's length within fp32 summation-order error, -inf from it.
TEST(NpuPagedMqaLogits, Fp8MatchesTheHostBackend) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  using dga::core::DType;
  const int64_t b = 5, next_n = 2, h = 64, d = 128, bkv = 64, pages = 9, width = pages * bkv - 20;
  const int64_t blocks = b * pages, block_bytes = bkv * (d + 4);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  std::vector<uint8_t> q(size_t(b * next_n * h * d)), cache(size_t(blocks * block_bytes));
  for (auto& v : q) v = dga::core::float_to_e4m3(nd(rng));
  for (int64_t k = 0; k < blocks; ++k) {
    uint8_t* block = cache.data() + k * block_bytes;
    for (int64_t i = 0; i < bkv * d; ++i) block[i] = dga::core::float_to_e4m3(nd(rng));
    for (int64_t i = 0; i < bkv; ++i) reinterpret_cast<float*>(block + bkv * d)[i] = 0.05f;
  }
  std::vector<float> w(size_t(b * next_n * h));
  for (auto& v : w) v = nd(rng);
  std::vector<int32_t> lens(size_t(b * next_n)), table(size_t(b * pages));
  std::uniform_int_distribution<int32_t> len(0, int32_t(width));
  for (auto& v : lens) v = len(rng);
  for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t((i * 7) % size_t(blocks));
  std::vector<float> out(size_t(b * next_n * width), NAN), ref(out);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  void* dq = to_device(q.data(), q.size());
  void* dc = to_device(cache.data(), cache.size());
  void* dw = to_device(w.data(), w.size() * 4);
  void* dl = to_device(lens.data(), lens.size() * 4);
  void* dt = to_device(table.data(), table.size() * 4);
  void* dout = to_device(out.data(), out.size() * 4);
  const auto call = [&](void* pq, void* pc, void* pw, void* pl, void* pt, void* po, bool host) {
    dga::fp8_fp4_paged_mqa_logits(tensor(pq, DType::kFP8E4M3, {b, next_n, h, d}, host), nullptr,
                                  tensor(pc, DType::kUInt8, {blocks, bkv, 1, d + 4}, host),
                                  tensor(pw, DType::kFP32, {b * next_n, h}, host),
                                  tensor(pl, DType::kInt32, {b, next_n}, host),
                                  tensor(pt, DType::kInt32, {b, pages}, host),
                                  tensor(po, DType::kFP32, {b * next_n, width}, host), true, nullptr);
  };
  call(dq, dc, dw, dl, dt, dout, false);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  aclrtMemcpy(out.data(), out.size() * 4, dout, out.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
  call(q.data(), cache.data(), w.data(), lens.data(), table.data(), ref.data(), true);
  int64_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i)
    bad += std::isinf(ref[i]) ? !(std::isinf(out[i]) && out[i] < 0)
                              : !(std::fabs(out[i] - ref[i]) <= 1e-4f * (std::fabs(ref[i]) + 1));
  EXPECT_EQ(bad, 0);
  for (void* p : {dq, dc, dw, dl, dt, dout}) aclrtFree(p);
#endif
}

// Mega MoE's SwiGLU stage (swiglu.asc) against the host backend: e4m3 codes within one step of the host's
// (the device's exp and division may round differently), the UE8M0 scale words equal but for such a step.
TEST(NpuSwiglu, MatchesTheHostBackend) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  using dga::core::DType;
  const int64_t m = 37, inter = 2048;
  const auto h = dga_test::random_bf16(size_t(m * 2 * inter), 9);
  std::vector<float> w(size_t(m), 0.75f);
  std::vector<uint8_t> out(size_t(m * inter), 0x55), ref(out);
  std::vector<int32_t> sf(size_t(m * inter / 128), -1), ref_sf(sf);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  void* dh = to_device(h.data(), h.size() * 2);
  void* dw = to_device(w.data(), w.size() * 4);
  void* dout = to_device(out.data(), out.size());
  void* dsf = to_device(sf.data(), sf.size() * 4);
  const auto sfv = tensor(dsf, DType::kInt32, {m, inter / 128});
  dga::mega_moe_swiglu(tensor(dh, DType::kBF16, {m, 2 * inter}), tensor(dw, DType::kFP32, {m}),
                       tensor(dout, DType::kFP8E4M3, {m, inter}), &sfv, 5.0f, true, true);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  aclrtMemcpy(out.data(), out.size(), dout, out.size(), ACL_MEMCPY_DEVICE_TO_HOST);
  aclrtMemcpy(sf.data(), sf.size() * 4, dsf, sf.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
  const auto ref_sfv = tensor(ref_sf.data(), DType::kInt32, {m, inter / 128}, true);
  dga::mega_moe_swiglu(tensor(const_cast<uint16_t*>(h.data()), DType::kBF16, {m, 2 * inter}, true),
                       tensor(w.data(), DType::kFP32, {m}, true), tensor(ref.data(), DType::kFP8E4M3, {m, inter}, true),
                       &ref_sfv, 5.0f, true, true);
  int64_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i) bad += std::abs(int(out[i] & 0x7F) - int(ref[i] & 0x7F)) > 1;
  EXPECT_EQ(bad, 0);
  for (void* p : {dh, dw, dout, dsf}) aclrtFree(p);
#endif
}

#ifdef DGA_WITH_NPU
// Mega MoE on one rank (mega_moe.asc around the contiguous GEMMs; FP8 x FP4: the weights widened to e4m3)
// against the host backend on a host buffer with the same inputs: calc_diff of y.
double mega_moe_one_rank(bool fp8) {
  using dga::core::DType;
  dga::comm::MegaMoeShape s{8, 384, 4, 1024, 512, 768, 1, fp8};
  const auto regions = dga::comm::mega_moe_regions(s);
  const int64_t h = s.hidden, inter = s.intermediate_hidden, e = s.experts_per_rank(), t_count = 100;
  constexpr int64_t kSfBlock = 32;
  std::vector<uint8_t> buf(size_t(regions.total_bytes), 0);
  std::mt19937 rng(7);
  // Random bytes: e4m3 x (NaN codes avoided), packed FP4 weights, UE8M0 scales near 1.
  const auto bytes = [&](size_t n, bool scales) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = scales ? uint8_t(124 + rng() % 6) : uint8_t(rng() % 256);
    for (auto& b : v) b = !scales && fp8 && (b & 0x7F) == 0x7F ? uint8_t(b ^ 1) : b;
    return v;
  };
  if (fp8) {
    const auto x = bytes(size_t(t_count * h), false), xs = bytes(size_t(t_count * h / kSfBlock), true);
    std::memcpy(buf.data() + regions.x.offset, x.data(), x.size());
    std::memcpy(buf.data() + regions.x_sf.offset, xs.data(), xs.size());
  } else {
    const auto x = dga_test::random_bf16(size_t(t_count * h), 3);
    std::memcpy(buf.data() + regions.x.offset, x.data(), x.size() * 2);
  }
  auto* idx = reinterpret_cast<int64_t*>(buf.data() + regions.topk_idx.offset);
  auto* wts = reinterpret_cast<float*>(buf.data() + regions.topk_weights.offset);
  for (int64_t t = 0; t < t_count; ++t)
    for (int64_t k = 0; k < s.num_topk; ++k) idx[t * s.num_topk + k] = (t + 3 * k) % e, wts[t * s.num_topk + k] = 0.5f;
  // Weights: bf16 [E, rows, K], or packed FP4 [E, rows, K / 2] with int32 scales [E, rows, K / 128].
  const DType wt = fp8 ? DType::kUInt8 : DType::kBF16;
  const int64_t per = fp8 ? 2 : 1, item = fp8 ? 1 : 2;
  std::vector<uint8_t> w1 = bytes(size_t(e * 2 * inter * h / per * item), false);
  std::vector<uint8_t> w2 = bytes(size_t(e * h * inter / per * item), false);
  if (!fp8) {
    const auto b1 = dga_test::random_bf16(size_t(e * 2 * inter * h), 4), b2 = dga_test::random_bf16(size_t(e * h * inter), 5);
    std::memcpy(w1.data(), b1.data(), w1.size()), std::memcpy(w2.data(), b2.data(), w2.size());
  }
  const auto s1 = bytes(size_t(e * 2 * inter * h / kSfBlock), true), s2 = bytes(size_t(e * h * inter / kSfBlock), true);
  std::vector<uint16_t> y(size_t(t_count * h), 0x7FC1), ref(y);
  EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  void* dbuf = to_device(buf.data(), buf.size());
  void* dw1 = to_device(w1.data(), w1.size());
  void* dw2 = to_device(w2.data(), w2.size());
  void* ds1 = to_device(s1.data(), s1.size());
  void* ds2 = to_device(s2.data(), s2.size());
  void* dy = to_device(y.data(), y.size() * 2);
  const int64_t k1 = h / per, k2 = inter / per, q1 = h / (4 * kSfBlock), q2 = inter / (4 * kSfBlock);
  const auto v_s1 = tensor(ds1, DType::kInt32, {e, 2 * inter, q1}), v_s2 = tensor(ds2, DType::kInt32, {e, h, q2});
  dga::mega_moe({s, {uintptr_t(dbuf)}, 0}, tensor(dy, DType::kBF16, {t_count, h}), tensor(dw1, wt, {e, 2 * inter, k1}),
                fp8 ? &v_s1 : nullptr, tensor(dw2, wt, {e, h, k2}), fp8 ? &v_s2 : nullptr, nullptr, -1.0f, true);
  EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  aclrtMemcpy(y.data(), y.size() * 2, dy, y.size() * 2, ACL_MEMCPY_DEVICE_TO_HOST);
  dga::comm::PeerGroup::register_process(buf.data());
  const auto h_s1 = tensor(const_cast<uint8_t*>(s1.data()), DType::kInt32, {e, 2 * inter, q1}, true);
  const auto h_s2 = tensor(const_cast<uint8_t*>(s2.data()), DType::kInt32, {e, h, q2}, true);
  dga::mega_moe({s, {uintptr_t(buf.data())}, 0}, tensor(ref.data(), DType::kBF16, {t_count, h}, true),
                tensor(w1.data(), wt, {e, 2 * inter, k1}, true), fp8 ? &h_s1 : nullptr,
                tensor(w2.data(), wt, {e, h, k2}, true), fp8 ? &h_s2 : nullptr, nullptr, -1.0f, true);
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double a = dga::core::bf16_to_float(ref[i]), b = dga::core::bf16_to_float(y[i]);
    num += (a - b) * (a - b), den += a * a + b * b;
  }
  for (void* p : {dbuf, dw1, dw2, ds1, ds2, dy}) aclrtFree(p);
  return num / den;
}
#endif

TEST(NpuMegaMoe, Bf16OneRankMatchesTheHostBackend) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  EXPECT_LT(mega_moe_one_rank(false), 1e-5);
#endif
}

TEST(NpuMegaMoe, Fp8Fp4OneRankMatchesTheHostBackend) {
  DGA_REQUIRE_NPU_DEVICE();
#ifdef DGA_WITH_NPU
  EXPECT_LT(mega_moe_one_rank(true), 1e-5);
#endif
}
