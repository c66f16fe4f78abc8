// Dense FP8 / FP4 GEMM entry points: operand formats, scale layouts and recipes; the head-split output of
// fp8_gemm_nt_skip_head_mid as two M-grouped masked GEMMs over the heads.
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

void fp8_fp4_gemm(const std::string& lay, const TensorView& a, const TensorView& sfa, const TensorView& b,
                  const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe recipe_a,
                  ScaleRecipe recipe_b) {
  api::require_gemm_layout(lay);
  api::require_same_device({{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"c", c}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  const api::Operand oa = api::operand(a, "a"), ob = api::operand(b, "b");
  const bool ta = lay[0] == 't', tb = lay[1] == 'n';
  const api::GemmShape s{ta ? oa.cols : oa.rows, tb ? ob.cols : ob.rows, ta ? oa.rows : oa.cols};
  const int64_t kb = tb ? ob.rows : ob.cols;
  DGA_REQUIRE(kb == s.k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", s.k, " but b ", b.shape_str(),
              " has K=", kb, " (layout ", lay, "; packed FP4 holds two values per byte)");
  api::check_recipe(recipe_a, "recipe_a");
  api::check_recipe(recipe_b, "recipe_b");
  const layout::ScaleRef sa = api::scales(sfa, "sfa", s.m, s.k, recipe_a),
                         sb = api::scales(sfb, "sfb", s.n, s.k, recipe_b);
  api::validate_output(d, c, s.m, s.n, {{"a", &a}, {"b", &b}, {"sfa", &sfa}, {"sfb", &sfb}});
  const int a_bits = tile::operand_bits(oa.fmt), b_bits = tile::operand_bits(ob.fmt);
  kernel::GemmProblem problem{api::matrix(a, a_bits, ta), api::matrix(b, b_bits, tb), api::epilogue(d, c),
                              {true, sa, sb}};
  if (npu) return api::npu_gemm(s, problem, {oa.fmt, ob.fmt}, d, c);
  if (api::trivial_gemm(s, d, c)) return;
  // Host: power-of-two scales (UE8M0, or fp32 ones that are) fold into the L0 loads instead of promoting every
  // K block; one pass over the scales decides.
  const bool fold = problem.scaling.fold = api::scales_fold(problem);
  kernel::GemmArgs args{.problems = &problem, .num_problems = 1, .config = {}, .operands = {oa.fmt, ob.fmt},
                        .scaled = true};
  const int64_t promote_k = fold ? 0 : std::min(recipe_a.gran_k, recipe_b.gran_k);
  api::launch_gemm("fp8_fp4_gemm",
                   {.m = s.m, .n = s.n, .k = s.k, .a_bits = a_bits, .b_bits = b_bits, .l0_bits = core::kBf16Bits,
                    .d_bytes = int(core::itemsize(d.dtype)), .with_accumulation = c != nullptr, .num_cores = 1,
                    .promote_k = promote_k},
                   args);
}

namespace {

// Bytes from the scales of row 0 to those of row `rows` (a multiple of the scales' gran_mn).
int64_t scale_row_bytes(const layout::ScaleRef& s, int64_t rows) {
  return static_cast<const uint8_t*>(s.shifted(rows).base) - static_cast<const uint8_t*>(s.base);
}

}  // namespace

void fp8_gemm_nt_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, int64_t left, int64_t mid, int64_t right, ScaleRecipe recipe_a,
                               ScaleRecipe recipe_b) {
  api::require_same_device({{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  api::require_dtype(a, "a", {DType::kFP8E4M3});
  api::require_dtype(b, "b", {DType::kFP8E4M3});
  const api::Operand oa = api::operand(a, "a"), ob = api::operand(b, "b");
  using F = tile::OperandFormat;
  const int64_t m = oa.rows, k = oa.cols, n = ob.rows;
  DGA_REQUIRE(ob.cols == k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", k, " but b ", b.shape_str(),
              " has K=", ob.cols);
  DGA_REQUIRE(n > 0 && k > 0, kValue, "b", "N and K must be positive, got ", b.shape_str());
  DGA_REQUIRE(left >= 0 && mid >= 0 && right >= 0 && left + right > 0 && n % (left + right) == 0, kValue,
              "head_splits", "(left, mid, right) = (", left, ", ", mid, ", ", right,
              ") must be non-negative with left + right > 0 dividing N = ", n);
  const int64_t heads = n / (left + right), width = left + mid + right;
  api::check_recipe(recipe_a, "recipe_a");
  api::check_recipe(recipe_b, "recipe_b");
  DGA_REQUIRE(recipe_a.gran_k == 128 && recipe_b.gran_k == 128, kValue, "recipe",
              "fp8_gemm_nt_skip_head_mid takes scales of 128 K values, got gran_k ", recipe_a.gran_k, " / ",
              recipe_b.gran_k);
  const layout::ScaleRef sa = api::scales(sfa, "sfa", m, k, recipe_a), sb = api::scales(sfb, "sfb", n, k, recipe_b);
  DGA_REQUIRE(left % sb.gran_mn == 0 && right % sb.gran_mn == 0, kValue, "head_splits", "left ", left, " and right ",
              right, " must be multiples of the B scales' gran_n ", sb.gran_mn);
  api::validate_output(d, nullptr, m, heads * width, {{"a", &a}, {"b", &b}, {"sfa", &sfa}, {"sfb", &sfb}});
  if (m == 0) return;
  const layout::MatrixRef am = api::matrix(a, 8, false), bm = api::matrix(b, 8, false);
  const block::EpilogueArgs e = api::epilogue(d, nullptr);
  const std::vector<int32_t> all_rows(static_cast<size_t>(heads), static_cast<int32_t>(m));
  // Host: power-of-two scales fold (as in fp8_fp4_gemm); every head reads A's scales and its rows of B's.
  const bool fold = !npu && layout::all_scales_fold(sa, m, k) && layout::all_scales_fold(sb, n, k);
  // One masked launch per side of the gap: group h is head h (A shared, B and D a head apart).
  const std::tuple<int64_t, int64_t, int64_t> sides[] = {{0, left, 0}, {left, right, left + mid}};  // B row, cols, D col
  for (const auto& [first, cols, col0] : sides) {
    if (cols == 0) continue;
    kernel::MaskedProblems<kernel::HostRows> problems{.a = am, .b = bm, .e = e, .a_group = 0,
                                                      .b_group = (left + right) * bm.row_stride, .d_group = width,
                                                      .groups = heads, .rows = {all_rows.data()},
                                                      .scaling = {true, sa, sb.shifted(first), fold}, .sfa_group = 0,
                                                      .sfb_group = scale_row_bytes(sb, left + right)};
    problems.b.origin += first * bm.row_stride, problems.b.rows = cols;
    problems.e.d.origin += col0 * e.d.col_stride, problems.e.d.cols = cols;
    if (npu) {
      api::npu_masked_gemm(problems, {F::kE4M3, F::kE4M3}, nullptr, d, m);
      continue;
    }
    kernel::GemmArgs args{.problems = nullptr, .num_problems = 0, .config = {}, .operands = {F::kE4M3, F::kE4M3},
                          .scaled = true};
    api::launch_gemm("fp8_gemm_nt_skip_head_mid",
                     {.m = m, .n = cols, .k = k, .a_bits = core::kFp8Bits, .b_bits = core::kFp8Bits,
                      .l0_bits = core::kBf16Bits, .d_bytes = int(core::itemsize(d.dtype)), .with_accumulation = false,
                      .num_cores = 1, .promote_k = fold ? 0 : 128}, args, problems);
  }
}

}  // namespace deepgemm_ascend
