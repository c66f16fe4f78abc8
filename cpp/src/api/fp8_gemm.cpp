// Dense FP8 / FP4 GEMM entry point: operand formats, scale layouts and recipes.
#include "deepgemm_ascend/api.hpp"
#include "gemm_common.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;
using core::ErrorKind;

namespace {

constexpr int64_t kMxGranK = 32, kBlockGranK = 128;
constexpr int kPairPack = 2, kQuadPack = 4;  // UE8M0 bytes per int16 / int32

struct Operand {
  tile::OperandFormat fmt;
  int64_t rows, cols;  // logical size of the stored tensor (packed axis doubled)
};

Operand operand(const TensorView& t, const char* arg) {
  api::require_rank(t, arg, 2);
  switch (t.dtype) {
    case DType::kFP8E4M3: return {tile::OperandFormat::kE4M3, t.shape[0], t.shape[1]};
    case DType::kFP8E5M2: return {tile::OperandFormat::kE5M2, t.shape[0], t.shape[1]};
    case DType::kInt8: case DType::kUInt8: case DType::kFP4E2M1x2:
      DGA_REQUIRE(t.size(-1) <= 1 || t.stride(-1) == 1, kValue, arg,
                  "packed FP4 needs a contiguous last dimension (two values per byte), got strides ",
                  t.strides_str());
      return {tile::OperandFormat::kE2M1, t.shape[0], t.shape[1] * 2};
    default:
      core::fail(ErrorKind::kType, arg, "expected float8_e4m3fn, float8_e5m2 or packed FP4 (int8, uint8, ",
                 "float4_e2m1fn_x2), got ", core::name(t.dtype));
  }
}

void check_recipe(const ScaleRecipe& r, const char* arg) {
  DGA_REQUIRE(r.gran_k == kMxGranK || r.gran_k == kBlockGranK, kValue, arg, "gran_k must be 32 or 128, got ",
              r.gran_k);
  DGA_REQUIRE(r.gran_mn >= 1, kValue, arg, "gran_mn must be positive, got ", r.gran_mn);
}

// Validates a scale tensor for `mn` rows and K = k, and describes it for the kernel.
layout::ScaleRef scales(const TensorView& sf, const char* arg, int64_t mn, int64_t k, const ScaleRecipe& r) {
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
  DGA_REQUIRE(sf.dtype == DType::kInt16 || sf.dtype == DType::kInt32, kType, arg,
              "expected float32 scales or UE8M0 packed into int16 (Ascend) or int32 (upstream), got ",
              core::name(sf.dtype));
  DGA_REQUIRE(r.gran_mn == 1, kValue, arg, "packed UE8M0 scales need one scale row per ", "row (gran_mn 1), got ",
              r.gran_mn);
  ref.ue8m0 = true;
  ref.pack = sf.dtype == DType::kInt16 ? kPairPack : kQuadPack;
  api::require_shape(sf, arg, {mn, layout::ceil_div(sk, ref.pack)});
  ref.mn_stride = sf.strides[0] * core::itemsize(sf.dtype);
  ref.k_stride = sf.strides[1] * core::itemsize(sf.dtype);
  return ref;
}

}  // namespace

void fp8_fp4_gemm(const std::string& lay, const TensorView& a, const TensorView& sfa, const TensorView& b,
                  const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe recipe_a,
                  ScaleRecipe recipe_b) {
  api::require_gemm_layout(lay);
  api::require_same_device({{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"c", c}});
  api::require_host(a, "a");
  const Operand oa = operand(a, "a"), ob = operand(b, "b");
  const bool ta = lay[0] == 't', tb = lay[1] == 'n';
  const api::GemmShape s{ta ? oa.cols : oa.rows, tb ? ob.cols : ob.rows, ta ? oa.rows : oa.cols};
  const int64_t kb = tb ? ob.rows : ob.cols;
  DGA_REQUIRE(kb == s.k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", s.k, " but b ", b.shape_str(),
              " has K=", kb, " (layout ", lay, "; packed FP4 holds two values per byte)");
  check_recipe(recipe_a, "recipe_a");
  check_recipe(recipe_b, "recipe_b");
  const layout::ScaleRef sa = scales(sfa, "sfa", s.m, s.k, recipe_a), sb = scales(sfb, "sfb", s.n, s.k, recipe_b);
  api::validate_output(d, c, s.m, s.n, {{"a", &a}, {"b", &b}, {"sfa", &sfa}, {"sfb", &sfb}});
  if (api::trivial_gemm(s, d, c)) return;

  const int a_bits = tile::operand_bits(oa.fmt), b_bits = tile::operand_bits(ob.fmt);
  kernel::GemmArgs args{api::matrix(a, a_bits, ta), api::matrix(b, b_bits, tb), api::epilogue(d, c), {},
                        {oa.fmt, ob.fmt}, {true, sa, sb}};
  const int64_t promote_k = std::min(recipe_a.gran_k, recipe_b.gran_k);
  api::launch_gemm("fp8_fp4_gemm",
                   {s.m, s.n, s.k, a_bits, b_bits, 16, int(core::itemsize(d.dtype)), c != nullptr, 1, promote_k},
                   args);
}

}  // namespace deepgemm_ascend
