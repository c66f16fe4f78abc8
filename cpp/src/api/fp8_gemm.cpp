// Dense FP8 / FP4 GEMM entry point: operand formats, scale layouts and recipes.
#include "deepgemm_ascend/api.hpp"
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
  const kernel::GemmProblem problem{api::matrix(a, a_bits, ta), api::matrix(b, b_bits, tb), api::epilogue(d, c),
                                    {true, sa, sb}};
  if (npu) return api::npu_gemm(s, problem, {oa.fmt, ob.fmt}, d, c);
  if (api::trivial_gemm(s, d, c)) return;
  kernel::GemmArgs args{&problem, 1, {}, {oa.fmt, ob.fmt}, true};
  const int64_t promote_k = std::min(recipe_a.gran_k, recipe_b.gran_k);
  api::launch_gemm("fp8_fp4_gemm",
                   {s.m, s.n, s.k, a_bits, b_bits, 16, int(core::itemsize(d.dtype)), c != nullptr, 1, promote_k},
                   args);
}

}  // namespace deepgemm_ascend
