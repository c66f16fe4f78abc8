#include "gemm_common.hpp"

#include <algorithm>
#include <iostream>
#include <mutex>
#include <set>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/heuristics/mqa_tiling.hpp"
#include "deepgemm_ascend/jit/gemm_jit.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"
#include "validate.hpp"

namespace deepgemm_ascend::api {

using core::DType;

namespace {
constexpr int64_t kMxGranK = arch::MxFormat::kMxBlockK;
constexpr int kPairPack = arch::MxFormat::kMxScalesPerPack, kQuadPack = 4;  // UE8M0 bytes per int16 / upstream int32
}  // namespace

void require_gemm_layout(const std::string& lay) {
  DGA_REQUIRE(lay == "nt" || lay == "nn" || lay == "tn" || lay == "tt", kValue, "layout",
              "expected one of nt, nn, tn, tt, got '", lay, "'");
}

core::TensorView index_leading(const core::TensorView& t, int64_t i) {
  core::TensorView v = t;
  v.offset += i * t.strides[0];
  v.ndim = t.ndim - 1;
  for (int d = 0; d < v.ndim; ++d) {
    v.shape[d] = t.shape[d + 1];
    v.strides[d] = t.strides[d + 1];
  }
  return v;
}

layout::MatrixRef matrix(const core::TensorView& t, int bits, bool transpose) {
  const int64_t per = bits == 4 ? 2 : 1;  // values per stored element
  layout::MatrixRef r{.base = t.data,
                      .origin = t.offset * per,
                      .rows = t.shape[0],
                      .cols = t.shape[1] * per,
                      .row_stride = t.strides[0] * per,
                      .col_stride = bits == 4 ? 1 : t.strides[1],
                      .bits = bits};
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

Operand operand(const core::TensorView& t, const char* arg) {
  api::require_rank(t, arg, 2);
  switch (t.dtype) {
    case DType::kFP8E4M3: return {tile::OperandFormat::kE4M3, t.shape[0], t.shape[1]};
    case DType::kFP8E5M2: return {tile::OperandFormat::kE5M2, t.shape[0], t.shape[1]};
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kFP4E2M1x2:
      DGA_REQUIRE(t.size(-1) <= 1 || t.stride(-1) == 1, kValue, arg,
                  "packed FP4 needs a contiguous last dimension (two values per byte), got strides ", t.strides_str());
      return {tile::OperandFormat::kE2M1, t.shape[0], t.shape[1] * 2};
    default:
      core::fail(core::ErrorKind::kType, arg, "expected float8_e4m3fn, float8_e5m2 or packed FP4 (int8, uint8, ",
                 "float4_e2m1fn_x2), got ", core::name(t.dtype));
  }
}

void check_recipe(const ScaleRecipe& r, const char* arg) {
  DGA_REQUIRE(r.gran_k == kMxGranK || r.gran_k == kBlockGranK, kValue, arg, "gran_k must be 32 or 128, got ", r.gran_k);
  DGA_REQUIRE(r.gran_mn >= 1, kValue, arg, "gran_mn must be positive, got ", r.gran_mn);
}

// Validates a scale tensor for `mn` rows and K = k, and describes it for the kernel.
layout::ScaleRef scales(const core::TensorView& sf, const char* arg, int64_t mn, int64_t k, const ScaleRecipe& r) {
  api::require_rank(sf, arg, 2);
  const int64_t sk = layout::ceil_div(k, r.gran_k);
  layout::ScaleRef ref;
  ref.base = sf.ptr();
  ref.gran_mn = r.gran_mn;
  ref.gran_k = r.gran_k;
  if (sf.dtype == DType::kFP32) {
    api::require_shape(sf, arg, {layout::ceil_div(mn, r.gran_mn), sk});
    ref.mn_stride = sf.strides[0];
    ref.k_stride = sf.strides[1];
    return ref;
  }
  const bool bytes = sf.dtype == DType::kUInt8 || sf.dtype == DType::kUE8M0;
  DGA_REQUIRE(bytes || sf.dtype == DType::kInt16 || sf.dtype == DType::kInt32, kType, arg,
              "expected float32 scales, UE8M0 exponent bytes (uint8, float8_e8m0fnu) or UE8M0 packed into int16 ",
              "(Ascend) or int32 (upstream), got ", core::name(sf.dtype));
  DGA_REQUIRE(r.gran_mn == 1, kValue, arg, "UE8M0 scales need one scale row per ", "row (gran_mn 1), got ", r.gran_mn);
  ref.ue8m0 = true;
  ref.pack = bytes ? 1 : sf.dtype == DType::kInt16 ? kPairPack : kQuadPack;
  api::require_shape(sf, arg, {mn, layout::ceil_div(sk, ref.pack)});
  ref.mn_stride = sf.strides[0] * core::itemsize(sf.dtype);
  ref.k_stride = sf.strides[1] * core::itemsize(sf.dtype);
  return ref;
}

void print_gemm_config(const char* kernel, const heuristics::GemmDesc& desc, const heuristics::GemmConfig& cfg) {
  if (!runtime::print_configs()) return;
  static std::mutex mu;
  static std::set<std::string> seen;
  const std::string key = std::string(kernel) + " " + heuristics::to_string(desc);
  std::lock_guard<std::mutex> g(mu);
  if (seen.insert(key).second) std::cerr << "[deepgemm_ascend] " << key << " -> " << heuristics::to_string(cfg) << "\n";
}

heuristics::GemmConfig host_gemm_config(heuristics::GemmDesc& desc) {
  desc.num_cores = runtime::planning_cores();
  heuristics::GemmConfig cfg = heuristics::select_gemm_config(desc, runtime::host_arch_limits());
  cfg.num_blocks = desc.num_cores;
  return cfg;
}

void run_host_gemm(const char* kernel, kernel::GemmArgs& args) {
  if (runtime::jit_gemm()) return jit::launch_gemm(kernel, args);
  runtime::host_backend().launch(kernel, args.config.num_blocks,
                                 [&args](tile::host::Core& core) { kernel::gemm<tile::host::HostTarget>(core, args); });
}

bool scales_fold(const kernel::GemmProblem& p) {
  const block::Scaling& s = p.scaling;
  const int64_t k = p.a.cols;
  return s.enabled && layout::all_scales_fold(s.a, p.a.rows, k) && layout::all_scales_fold(s.b, p.b.rows, k);
}

bool fold_scales(std::vector<kernel::GemmProblem>& problems) {
  bool all = !problems.empty();
  for (kernel::GemmProblem& p : problems) all &= p.scaling.fold = scales_fold(p);
  return all;
}

layout::ScaleRef ue8m0_rows(const void* base) {
  return layout::ScaleRef{.base = base,
                          .ue8m0 = true,
                          .pack = kQuadPack,
                          .mn_stride = kQuadPack,
                          .k_stride = kQuadPack,
                          .gran_mn = 1,
                          .gran_k = kMxGranK};
}

}  // namespace deepgemm_ascend::api
