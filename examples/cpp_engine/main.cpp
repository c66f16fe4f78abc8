// A minimal engine-side use of the C++ API: one BF16 GEMM and one FP8 GEMM (per-token x per-block
// fp32 scales), each checked against a double-precision reference on the decoded inputs.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"

namespace dga = deepgemm_ascend;
using dga::core::DType;

namespace {

dga::TensorView view(void* data, DType dtype, int64_t rows, int64_t cols) {
  dga::TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.ndim = 2;
  v.shape[0] = rows;
  v.shape[1] = cols;
  v.strides[0] = cols;
  v.strides[1] = 1;
  return v;
}

// Relative squared error, as DeepGEMM's calc_diff.
double calc_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += x[i] * x[i] + y[i] * y[i];
  }
  return den == 0 ? 0 : num / den;
}

bool bf16_gemm(std::mt19937& rng) {
  const int64_t m = 128, n = 96, k = 256;
  std::normal_distribution<float> nd;
  std::vector<uint16_t> a(m * k), b(n * k), d(m * n);
  for (auto& v : a) v = dga::core::float_to_bf16(nd(rng));
  for (auto& v : b) v = dga::core::float_to_bf16(nd(rng));
  dga::bf16_gemm_nt(view(a.data(), DType::kBF16, m, k), view(b.data(), DType::kBF16, n, k),
                    view(d.data(), DType::kBF16, m, n));
  std::vector<double> got(m * n), ref(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p)
        ref[i * n + j] += double(dga::core::bf16_to_float(a[i * k + p])) * dga::core::bf16_to_float(b[j * k + p]);
      got[i * n + j] = dga::core::bf16_to_float(d[i * n + j]);
    }
  const double diff = calc_diff(got, ref);
  std::printf("bf16_gemm_nt %lldx%lldx%lld: calc_diff %.3g\n", (long long)m, (long long)n, (long long)k, diff);
  return diff < 1e-5;
}

bool fp8_gemm(std::mt19937& rng) {
  const int64_t m = 64, n = 256, k = 512, g = 128;
  std::normal_distribution<float> nd;
  std::vector<uint8_t> a(m * k), b(n * k);
  std::vector<float> sfa(m * (k / g)), sfb((n / g) * (k / g)), d(m * n);
  for (auto& v : a) v = dga::core::float_to_e4m3(nd(rng) * 100.0f);
  for (auto& v : b) v = dga::core::float_to_e4m3(nd(rng) * 100.0f);
  std::uniform_real_distribution<float> ud(0.001f, 0.01f);
  for (auto& v : sfa) v = ud(rng);
  for (auto& v : sfb) v = ud(rng);
  dga::fp8_fp4_gemm("nt", view(a.data(), DType::kFP8E4M3, m, k), view(sfa.data(), DType::kFP32, m, k / g),
                    view(b.data(), DType::kFP8E4M3, n, k), view(sfb.data(), DType::kFP32, n / g, k / g),
                    view(d.data(), DType::kFP32, m, n), nullptr, {1, g}, {g, g});
  std::vector<double> got(d.begin(), d.end()), ref(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        ref[i * n + j] += double(dga::core::e4m3_to_float(a[i * k + p])) * sfa[i * (k / g) + p / g] *
                          dga::core::e4m3_to_float(b[j * k + p]) * sfb[(j / g) * (k / g) + p / g];
  const double diff = calc_diff(got, ref);
  std::printf("fp8_gemm_nt %lldx%lldx%lld: calc_diff %.3g\n", (long long)m, (long long)n, (long long)k, diff);
  return diff < 1e-6;
}

}  // namespace

int main() {
  std::printf("deepgemm_ascend %s, %d AI cores\n", dga::version(), dga::get_num_ai_cores());
  std::mt19937 rng(0);
  const bool ok = bf16_gemm(rng) & fp8_gemm(rng);
  std::puts(ok ? "cpp_engine: OK" : "cpp_engine: FAILED");
  return ok ? 0 : 1;
}
