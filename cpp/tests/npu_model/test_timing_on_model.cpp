// The timing mode on our NPU kernels (cpp/npu_model/shim/model_timing.hpp): the timing-only mode predicts
// what a full run predicts, and the BF16 GEMM at DeepGEMM-Ascend's published shape (4096 x 7168 x 16384)
// is predicted between the cube's bound and a few times it. With DGA_TIMING_BASELINE_US set (the planted
// pipeline regressions of scripts/check_npu_model.sh), that prediction must not be above it (the model is
// deterministic: the same kernel predicts the same time).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace timing_on_model_test {

namespace core = deepgemm_ascend::core;
namespace runtime = deepgemm_ascend::runtime;
namespace h = deepgemm_ascend::heuristics;
using deepgemm_ascend::arch::Ascend950;

// Sets an environment variable for one scope and puts the old value back.
class Env {
 public:
  Env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~Env() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// A number field of a one-line JSON report.
double field(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  return at == std::string::npos ? -1.0 : std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

struct Bf16Gemm {
  int64_t m, n, k;
  int cores = Ascend950::kDefaultCubeCores;
  std::vector<uint16_t> a, b, d;
  DgaGemmParams p{};

  Bf16Gemm(int64_t m_, int64_t n_, int64_t k_, bool random) : m(m_), n(n_), k(k_), a(size_t(m * k)), b(size_t(n * k)),
                                                               d(size_t(m * n)) {
    for (size_t i = 0; random && i < a.size(); ++i) a[i] = uint16_t(0x3F80 + (i * 7) % 61);
    for (size_t i = 0; random && i < b.size(); ++i) b[i] = uint16_t(0xBF80 + (i * 5) % 53);
    const h::GemmConfig cfg = h::select_gemm_config(h::npu_gemm_desc(m, n, k, 16, 16, 2, cores),
                                                    h::ArchLimits::of<Ascend950>());
    p.a = {.addr = uint64_t(uintptr_t(a.data())), .rows = m, .cols = k, .row_stride = k, .col_stride = 1};
    p.b = {.addr = uint64_t(uintptr_t(b.data())), .rows = n, .cols = k, .row_stride = k, .col_stride = 1};
    p.d = {.addr = uint64_t(uintptr_t(d.data())), .rows = m, .cols = n, .row_stride = n, .col_stride = 1};
    p.d_dtype = int32_t(core::DType::kBF16);
    p.block_m = cfg.tiling.block_m, p.block_n = cfg.tiling.block_n, p.block_k = cfg.tiling.block_k;
    p.l0_k = cfg.tiling.l0_k, p.swizzle_band = cfg.swizzle.band, p.swizzle_along_m = cfg.swizzle.along_m ? 1 : 0;
  }

  // The launch's report in the timing mode (timing-only: the arithmetic skipped).
  std::string timed(bool only) {
    // One file per process: check_npu_model.sh runs two copies of this test at once.
    const std::string path = testing::TempDir() + "dga_timing_" + std::to_string(::getpid()) + "_" + std::to_string(m) +
                             (only ? "_only" : "") + ".jsonl";
    std::remove(path.c_str());
    {
      const Env timing("DGA_NPU_MODEL_TIMING", path.c_str());
      const Env skip("DGA_NPU_MODEL_TIMING_ONLY", only ? "1" : "0");
      runtime::npu_model_launch("dga_npu_launch_gemm_bf16", unsigned(cores), &p);
    }
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    if (!std::getenv("DGA_KEEP")) std::remove(path.c_str());
    return line;
  }
};

TEST(NpuModelTiming, TimingOnlyPredictsWhatTheFullRunPredicts) {
  if (!runtime::npu_model_available()) GTEST_SKIP() << runtime::npu_model_unavailable_reason();
  Bf16Gemm g(600, 520, 700, true);
  const std::string full = g.timed(false), only = g.timed(true);
  ASSERT_GT(field(full, "time_us"), 0) << full.substr(0, 200);
  EXPECT_DOUBLE_EQ(field(only, "time_us"), field(full, "time_us"));
  EXPECT_DOUBLE_EQ(field(only, "hbm_read_bytes"), field(full, "hbm_read_bytes"));
  EXPECT_DOUBLE_EQ(field(only, "hbm_write_bytes"), field(full, "hbm_write_bytes"));
}

TEST(NpuModelTiming, Bf16ProductionShapeIsPredictedNearTheCubeBound) {
  if (!runtime::npu_model_available()) GTEST_SKIP() << runtime::npu_model_unavailable_reason();
  Bf16Gemm g(4096, 7168, 16384, false);
  const std::string report = g.timed(true);
  const double us = field(report, "time_us");
  const auto& t = Ascend950::kTiming;
  const double cube_us = double(g.m) * double(g.n) * double(g.k) / (16.0 * 16 * t.mmad_k_fp16) /
                         (t.cube_cores * t.clock_ghz * 1e3);
  std::printf("BF16 %lldx%lldx%lld (blocks %lldx%lldx%lld, l0_k %lld): predicted %.4f us, cube bound %.2f us\n",
              (long long)g.m, (long long)g.n, (long long)g.k, (long long)g.p.block_m, (long long)g.p.block_n,
              (long long)g.p.block_k, (long long)g.p.l0_k, us, cube_us);
  EXPECT_GE(us, cube_us);
  EXPECT_LE(us, 3 * cube_us);
  if (const char* base = std::getenv("DGA_TIMING_BASELINE_US"))
    EXPECT_LE(us, std::strtod(base, nullptr) + 1e-3) << "predicted slower than the baseline " << base << " us";
}

}  // namespace timing_on_model_test
