// Dense BF16 GEMM entry point.
#include "deepgemm_ascend/api.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

void bf16_gemm(const std::string& lay, const TensorView& a, const TensorView& b, const TensorView& d,
               const TensorView* c) {
  api::require_gemm_layout(lay);
  api::require_same_device({{"a", &a}, {"b", &b}, {"d", &d}, {"c", c}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  api::require_dtype(a, "a", {DType::kBF16});
  api::require_dtype(b, "b", {DType::kBF16});
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 2);
  const bool ta = lay[0] == 't', tb = lay[1] == 'n';
  const api::GemmShape s{a.shape[ta ? 1 : 0], b.shape[tb ? 1 : 0], a.shape[ta ? 0 : 1]};
  const int64_t kb = b.shape[tb ? 0 : 1];
  DGA_REQUIRE(kb == s.k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", s.k, " but b ", b.shape_str(),
              " has K=", kb, " (layout ", lay, ")");
  api::validate_output(d, c, s.m, s.n, {{"a", &a}, {"b", &b}});
  const kernel::GemmProblem problem{api::matrix(a, core::kBf16Bits, ta), api::matrix(b, core::kBf16Bits, tb),
                                    api::epilogue(d, c)};
  if (npu) return api::npu_gemm(s, problem, {}, d, c);
  if (api::trivial_gemm(s, d, c)) return;

  kernel::GemmArgs args{.problems = &problem, .num_problems = 1, .config = {}};
  api::launch_gemm("bf16_gemm",
                   {.m = s.m,
                    .n = s.n,
                    .k = s.k,
                    .a_bits = core::kBf16Bits,
                    .b_bits = core::kBf16Bits,
                    .l0_bits = core::kBf16Bits,
                    .d_bytes = int(core::itemsize(d.dtype)),
                    .with_accumulation = c != nullptr},
                   args);
}

}  // namespace deepgemm_ascend
