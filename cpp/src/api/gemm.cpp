// Dense BF16 GEMM entry point: validation, trivial cases, heuristics, launch.
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;
using core::ErrorKind;

namespace {

struct GemmShape {
  int64_t m, n, k;
};

layout::MatrixRef matrix(const TensorView& t, bool transpose) {
  layout::MatrixRef r{t.data, t.offset, t.shape[0], t.shape[1], t.strides[0], t.strides[1],
                      int(core::itemsize(t.dtype) * 8)};
  return transpose ? r.transposed() : r;
}
layout::MutMatrixRef mut_matrix(const TensorView& t) {
  return {t.data, t.offset, t.shape[0], t.shape[1], t.strides[0], t.strides[1], int(core::itemsize(t.dtype) * 8)};
}

GemmShape validate_gemm(const std::string& lay, const TensorView& a, const TensorView& b, const TensorView& d,
                        const TensorView* c) {
  DGA_REQUIRE(lay == "nt" || lay == "nn" || lay == "tn" || lay == "tt", kValue, "layout",
              "expected one of nt, nn, tn, tt, got '", lay, "'");
  api::require_same_device({{"a", &a}, {"b", &b}, {"d", &d}, {"c", c}});
  api::require_host(a, "a");
  api::require_dtype(a, "a", {DType::kBF16});
  api::require_dtype(b, "b", {DType::kBF16});
  api::require_dtype(d, "d", {DType::kBF16, DType::kFP32});
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 2);
  api::require_rank(d, "d", 2);
  const bool ta = lay[0] == 't', tb = lay[1] == 'n';
  const int64_t m = a.shape[ta ? 1 : 0], k = a.shape[ta ? 0 : 1];
  const int64_t n = b.shape[tb ? 1 : 0], kb = b.shape[tb ? 0 : 1];
  DGA_REQUIRE(kb == k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", k, " but b ", b.shape_str(),
              " has K=", kb, " (layout ", lay, ")");
  api::require_shape(d, "d", {m, n});
  api::require_row_major_output(d, "d");
  api::require_no_overlap(d, "d", a, "a");
  api::require_no_overlap(d, "d", b, "b");
  if (c) {
    DGA_REQUIRE(c->dtype == d.dtype, kType, "c", "expected the dtype of d (", core::name(d.dtype), "), got ",
                core::name(c->dtype));
    api::require_shape(*c, "c", {m, n});
    DGA_REQUIRE(c->size(-1) <= 1 || c->stride(-1) == 1, kValue, "c",
                "last dimension must be contiguous (stride(-1) == 1), got strides ", c->strides_str());
    DGA_REQUIRE(!c->overlaps(d) || c->same_view(d), kValue, "c",
                "overlaps d without being the same view (identical data pointer, shape and strides)");
  }
  return {m, n, k};
}

// K == 0: D = C, or zeros.
void fill_from_c(const TensorView& d, const TensorView* c) {
  const auto dm = mut_matrix(d);
  for (int64_t i = 0; i < dm.rows; ++i)
    for (int64_t j = 0; j < dm.cols; ++j) dm.set(i, j, c ? matrix(*c, false).get(i, j) : 0u);
}

void maybe_print(const heuristics::GemmDesc& desc, const heuristics::GemmConfig& cfg) {
  if (!runtime::print_configs()) return;
  static std::mutex mu;
  static std::set<std::string> seen;
  const std::string key = heuristics::to_string(desc);
  std::lock_guard<std::mutex> g(mu);
  if (seen.insert(key).second) std::cerr << "[deepgemm_ascend] bf16_gemm " << key << " -> " << to_string(cfg) << "\n";
}

}  // namespace

void bf16_gemm(const std::string& lay, const TensorView& a, const TensorView& b, const TensorView& d,
               const TensorView* c) {
  const GemmShape s = validate_gemm(lay, a, b, d, c);
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) return fill_from_c(d, c);

  auto& backend = runtime::host_backend();
  heuristics::GemmDesc desc{s.m, s.n, s.k, 16, 16, 16, int(core::itemsize(d.dtype)), c != nullptr,
                            backend.num_ai_cores()};
  kernel::GemmArgs args{matrix(a, lay[0] == 't'), matrix(b, lay[1] == 'n'),
                        {mut_matrix(d), d.dtype, c ? matrix(*c, false) : layout::MatrixRef{}, c != nullptr},
                        heuristics::select_gemm_config(desc, runtime::host_arch_limits())};
  maybe_print(desc, args.config);
  backend.launch("bf16_gemm", args.config.num_blocks, [&args](tile::Core& core) { kernel::gemm(core, args); });
}

}  // namespace deepgemm_ascend
