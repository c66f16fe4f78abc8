#include "gemm_common.hpp"

#include <iostream>
#include <mutex>
#include <set>

#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"
#include "validate.hpp"

namespace deepgemm_ascend::api {

using core::DType;

void require_gemm_layout(const std::string& lay) {
  DGA_REQUIRE(lay == "nt" || lay == "nn" || lay == "tn" || lay == "tt", kValue, "layout",
              "expected one of nt, nn, tn, tt, got '", lay, "'");
}

layout::MatrixRef matrix(const core::TensorView& t, int bits, bool transpose) {
  const int64_t per = bits == 4 ? 2 : 1;  // values per stored element
  layout::MatrixRef r{t.data, t.offset * per, t.shape[0], t.shape[1] * per, t.strides[0] * per,
                      bits == 4 ? 1 : t.strides[1], bits};
  return transpose ? r.transposed() : r;
}

layout::MutMatrixRef mut_matrix(const core::TensorView& t) {
  return {t.data, t.offset, t.shape[0], t.shape[1], t.strides[0], t.strides[1], int(core::itemsize(t.dtype) * 8)};
}

void validate_output(const core::TensorView& d, const core::TensorView* c, int64_t m, int64_t n,
                     std::initializer_list<std::pair<const char*, const core::TensorView*>> inputs) {
  require_dtype(d, "d", {DType::kBF16, DType::kFP32});
  require_rank(d, "d", 2);
  require_shape(d, "d", {m, n});
  require_row_major_output(d, "d");
  for (const auto& [name, t] : inputs)
    if (t) require_no_overlap(d, "d", *t, name);
  if (!c) return;
  DGA_REQUIRE(c->dtype == d.dtype, kType, "c", "expected the dtype of d (", core::name(d.dtype), "), got ",
              core::name(c->dtype));
  require_shape(*c, "c", {m, n});
  DGA_REQUIRE(c->size(-1) <= 1 || c->stride(-1) == 1, kValue, "c",
              "last dimension must be contiguous (stride(-1) == 1), got strides ", c->strides_str());
  DGA_REQUIRE(!c->overlaps(d) || c->same_view(d), kValue, "c",
              "overlaps d without being the same view (identical data pointer, shape and strides)");
}

bool trivial_gemm(const GemmShape& s, const core::TensorView& d, const core::TensorView* c) {
  if (s.m == 0 || s.n == 0) return true;
  if (s.k != 0) return false;
  const auto dm = mut_matrix(d);
  const auto cm = c ? matrix(*c, dm.bits, false) : layout::MatrixRef{};
  for (int64_t i = 0; i < dm.rows; ++i)
    for (int64_t j = 0; j < dm.cols; ++j) dm.set(i, j, c ? cm.get(i, j) : 0u);
  return true;
}

block::EpilogueArgs epilogue(const core::TensorView& d, const core::TensorView* c) {
  return {mut_matrix(d), d.dtype, c ? matrix(*c, int(core::itemsize(c->dtype) * 8), false) : layout::MatrixRef{},
          c != nullptr};
}

namespace {
void maybe_print(const char* kernel, const heuristics::GemmDesc& desc, const heuristics::GemmConfig& cfg) {
  if (!runtime::print_configs()) return;
  static std::mutex mu;
  static std::set<std::string> seen;
  const std::string key = std::string(kernel) + " " + heuristics::to_string(desc);
  std::lock_guard<std::mutex> g(mu);
  if (seen.insert(key).second) std::cerr << "[deepgemm_ascend] " << key << " -> " << to_string(cfg) << "\n";
}
}  // namespace

void launch_gemm(const char* kernel, heuristics::GemmDesc desc, kernel::GemmArgs& args) {
  auto& backend = runtime::host_backend();
  desc.num_cores = backend.num_ai_cores();
  args.config = heuristics::select_gemm_config(desc, runtime::host_arch_limits());
  maybe_print(kernel, desc, args.config);
  backend.launch(kernel, args.config.num_blocks, [&args](tile::Core& core) { kernel::gemm(core, args); });
}

}  // namespace deepgemm_ascend::api
