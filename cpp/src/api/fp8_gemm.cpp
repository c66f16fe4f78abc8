// Dense FP8 / FP4 GEMM entry points: operand formats, scale layouts and recipes; the head-split output of
// fp8_gemm_nt_skip_head_mid as two M-grouped masked GEMMs over the heads.
#include <tuple>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

using core::kBf16Bits;
using core::kFp8Bits;
constexpr int64_t kSkipHeadGranK = 128;  // fp8_gemm_nt_skip_head_mid's scales: 128 K values each

// The validated dense call: its shape, operands and the problem over them.
struct DensePlan {
  bool npu;
  api::GemmShape s;
  block::Operands ops;
  kernel::GemmProblem problem;
};

DensePlan validate_dense(const std::string& lay, const TensorView& a, const TensorView& sfa, const TensorView& b,
                         const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe recipe_a,
                         ScaleRecipe recipe_b) {
  api::require_gemm_layout(lay);
  api::require_same_device({{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"c", c}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  const api::Operand oa = api::operand(a, "a"), ob = api::operand(b, "b");
  const bool ta = lay[0] == 't', tb = lay[1] == 'n';
  const api::GemmShape s{.m = ta ? oa.cols : oa.rows, .n = tb ? ob.cols : ob.rows, .k = ta ? oa.rows : oa.cols};
  const int64_t kb = tb ? ob.rows : ob.cols;
  DGA_REQUIRE(kb == s.k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", s.k, " but b ", b.shape_str(),
              " has K=", kb, " (layout ", lay, "; packed FP4 holds two values per byte)");
  api::check_recipe(recipe_a, "recipe_a");
  api::check_recipe(recipe_b, "recipe_b");
  const layout::ScaleRef sa = api::scales(sfa, "sfa", s.m, s.k, recipe_a),
                         sb = api::scales(sfb, "sfb", s.n, s.k, recipe_b);
  api::validate_output(d, c, s.m, s.n, {{"a", &a}, {"b", &b}, {"sfa", &sfa}, {"sfb", &sfb}});
  const int a_bits = tile::operand_bits(oa.fmt), b_bits = tile::operand_bits(ob.fmt);
  return {.npu = npu,
          .s = s,
          .ops = {.a = oa.fmt, .b = ob.fmt},
          .problem = {.a = api::matrix(a, a_bits, ta),
                      .b = api::matrix(b, b_bits, tb),
                      .epilogue = api::epilogue(d, c),
                      .scaling = {.enabled = true, .a = sa, .b = sb}}};
}

}  // namespace

void fp8_fp4_gemm(const std::string& lay, const TensorView& a, const TensorView& sfa, const TensorView& b,
                  const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe recipe_a,
                  ScaleRecipe recipe_b) {
  DensePlan p = validate_dense(lay, a, sfa, b, sfb, d, c, recipe_a, recipe_b);
  if (p.npu) return api::npu_gemm(p.s, p.problem, p.ops, d, c);
  if (api::trivial_gemm(p.s, d, c)) return;
  // Host: power-of-two scales (UE8M0, or fp32 ones that are) fold into the L0 loads instead of promoting every
  // K block; one pass over the scales decides.
  const bool fold = p.problem.scaling.fold = api::scales_fold(p.problem);
  kernel::GemmArgs args{.problems = &p.problem, .num_problems = 1, .config = {}, .operands = p.ops, .scaled = true};
  api::launch_gemm("fp8_fp4_gemm",
                   {.m = p.s.m,
                    .n = p.s.n,
                    .k = p.s.k,
                    .a_bits = tile::operand_bits(p.ops.a),
                    .b_bits = tile::operand_bits(p.ops.b),
                    .l0_bits = kBf16Bits,
                    .d_bytes = int(core::itemsize(d.dtype)),
                    .with_accumulation = c != nullptr,
                    .num_cores = 1,
                    .promote_k = fold ? 0 : std::min(recipe_a.gran_k, recipe_b.gran_k)},
                   args);
}

namespace {

// Bytes from the scales of row 0 to those of row `rows` (a multiple of the scales' gran_mn).
int64_t scale_row_bytes(const layout::ScaleRef& s, int64_t rows) {
  return static_cast<const uint8_t*>(s.shifted(rows).base) - static_cast<const uint8_t*>(s.base);
}

// The validated head-split call: D [M, heads * (left + mid + right)] from A [M, K] and B [N, K].
struct SkipHeadShape {
  bool npu;
  int64_t m, n, k, heads, width;
  layout::ScaleRef sa, sb;
};

SkipHeadShape validate_skip_head(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                 const TensorView& d, int64_t left, int64_t mid, int64_t right, ScaleRecipe recipe_a,
                                 ScaleRecipe recipe_b) {
  api::require_same_device({{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  api::require_dtype(a, "a", {DType::kFP8E4M3});
  api::require_dtype(b, "b", {DType::kFP8E4M3});
  const api::Operand oa = api::operand(a, "a"), ob = api::operand(b, "b");
  SkipHeadShape sh{.npu = npu,
                   .m = oa.rows,
                   .n = ob.rows,
                   .k = oa.cols,
                   .heads = 0,
                   .width = left + mid + right,
                   .sa = {},
                   .sb = {}};
  DGA_REQUIRE(ob.cols == sh.k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", sh.k, " but b ", b.shape_str(),
              " has K=", ob.cols);
  DGA_REQUIRE(sh.n > 0 && sh.k > 0, kValue, "b", "N and K must be positive, got ", b.shape_str());
  DGA_REQUIRE(left >= 0 && mid >= 0 && right >= 0 && left + right > 0 && sh.n % (left + right) == 0, kValue,
              "head_splits", "(left, mid, right) = (", left, ", ", mid, ", ", right,
              ") must be non-negative with left + right > 0 dividing N = ", sh.n);
  sh.heads = sh.n / (left + right);
  api::check_recipe(recipe_a, "recipe_a");
  api::check_recipe(recipe_b, "recipe_b");
  DGA_REQUIRE(recipe_a.gran_k == kSkipHeadGranK && recipe_b.gran_k == kSkipHeadGranK, kValue, "recipe",
              "fp8_gemm_nt_skip_head_mid takes scales of 128 K values, got gran_k ", recipe_a.gran_k, " / ",
              recipe_b.gran_k);
  sh.sa = api::scales(sfa, "sfa", sh.m, sh.k, recipe_a);
  sh.sb = api::scales(sfb, "sfb", sh.n, sh.k, recipe_b);
  DGA_REQUIRE(left % sh.sb.gran_mn == 0 && right % sh.sb.gran_mn == 0, kValue, "head_splits", "left ", left,
              " and right ", right, " must be multiples of the B scales' gran_n ", sh.sb.gran_mn);
  api::validate_output(d, nullptr, sh.m, sh.heads * sh.width, {{"a", &a}, {"b", &b}, {"sfa", &sfa}, {"sfb", &sfb}});
  return sh;
}

// One side of the gap as masked problems over the heads: group h is head h (A shared, B and D a head
// apart); B rows [first, first + cols) of each head into D columns [col0, col0 + cols) of its span.
kernel::MaskedProblems<kernel::HostRows> plan_side(const TensorView& a, const TensorView& b, const TensorView& d,
                                                   const SkipHeadShape& sh, int64_t left_right, bool fold,
                                                   const std::vector<int32_t>& all_rows, int64_t first, int64_t cols,
                                                   int64_t col0) {
  const layout::MatrixRef bm = api::matrix(b, kFp8Bits, false);
  kernel::MaskedProblems<kernel::HostRows> problems{
      .a = api::matrix(a, kFp8Bits, false),
      .b = bm,
      .e = api::epilogue(d, nullptr),
      .a_group = 0,
      .b_group = left_right * bm.row_stride,
      .d_group = sh.width,
      .groups = sh.heads,
      .rows = {all_rows.data()},
      .scaling = {.enabled = true, .a = sh.sa, .b = sh.sb.shifted(first), .fold = fold},
      .sfa_group = 0,
      .sfb_group = scale_row_bytes(sh.sb, left_right)};
  problems.b.origin += first * bm.row_stride, problems.b.rows = cols;
  problems.e.d.origin += col0 * problems.e.d.col_stride, problems.e.d.cols = cols;
  return problems;
}

}  // namespace

void fp8_gemm_nt_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, int64_t left, int64_t mid, int64_t right, ScaleRecipe recipe_a,
                               ScaleRecipe recipe_b) {
  const SkipHeadShape sh = validate_skip_head(a, sfa, b, sfb, d, left, mid, right, recipe_a, recipe_b);
  if (sh.m == 0) return;
  const std::vector<int32_t> all_rows(static_cast<size_t>(sh.heads), static_cast<int32_t>(sh.m));
  // Host: power-of-two scales fold (as in fp8_fp4_gemm); every head reads A's scales and its rows of B's.
  const bool fold = !sh.npu && layout::all_scales_fold(sh.sa, sh.m, sh.k) && layout::all_scales_fold(sh.sb, sh.n, sh.k);
  constexpr block::Operands kOps{.a = tile::OperandFormat::kE4M3, .b = tile::OperandFormat::kE4M3};
  // One masked launch per side of the gap.
  const std::tuple<int64_t, int64_t, int64_t> sides[] = {{0, left, 0},
                                                         {left, right, left + mid}};  // B row, cols, D col
  for (const auto& [first, cols, col0] : sides) {
    if (cols == 0) continue;
    auto problems = plan_side(a, b, d, sh, left + right, fold, all_rows, first, cols, col0);
    if (sh.npu) {
      api::npu_masked_gemm(problems, kOps, nullptr, d, sh.m);
      continue;
    }
    kernel::GemmArgs args{.problems = nullptr, .num_problems = 0, .config = {}, .operands = kOps, .scaled = true};
    api::launch_gemm("fp8_gemm_nt_skip_head_mid",
                     {.m = sh.m,
                      .n = cols,
                      .k = sh.k,
                      .a_bits = kFp8Bits,
                      .b_bits = kFp8Bits,
                      .l0_bits = kBf16Bits,
                      .d_bytes = int(core::itemsize(d.dtype)),
                      .with_accumulation = false,
                      .num_cores = 1,
                      .promote_k = fold ? 0 : kSkipHeadGranK},
                     args, problems);
  }
}

}  // namespace deepgemm_ascend
