// MoE K-grouped GEMM entry points (weight gradients: D[g] = C[g] + A_g^T B_g over each group's K range):
// validate, plan one problem per group, dispatch to the host kernel or the NPU.
#include <algorithm>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/cube_format.hpp"
#include "gemm_common.hpp"
#include "grouped_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using api::Formats;
using api::group_view;
using core::DType;

namespace {

using core::kFp32Bytes;
using core::kFp8Bits;

// [start, size) of every K group: packed sizes, or (psum) end offsets with aligned starts.
std::vector<std::pair<int64_t, int64_t>> k_groups(const std::vector<int64_t>& ks, const std::vector<int64_t>* ends,
                                                  int64_t align, int64_t rows) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t pos = 0;
  if (ends) {
    for (size_t g = 0; g < ends->size(); ++g) {
      const int64_t start = layout::align_up(pos, align), end = (*ends)[g];
      DGA_REQUIRE(end >= pos && (end >= start || end == pos), kValue, "grouped_layout", "end offset ", end,
                  " of group ", g, " is out of order");
      out.push_back({start, std::max<int64_t>(end - start, 0)});
      pos = end;
    }
    DGA_REQUIRE(pos <= rows, kValue, "grouped_layout", "the last group ends at ", pos, " but a and b have ", rows,
                " rows");
    return out;
  }
  for (size_t g = 0; g < ks.size(); ++g) {
    DGA_REQUIRE(ks[g] >= 0 && ks[g] % align == 0, kValue, "ks", "group ", g, " has K = ", ks[g],
                ", which is not a non-negative multiple of the alignment ", align);
    out.push_back({pos, ks[g]});
    pos += ks[g];
  }
  DGA_REQUIRE(pos == rows, kValue, "ks", "sums to ", pos, " but a and b have ", rows, " rows");
  return out;
}

// The arguments of one K-grouped call; ends: the psum layout's end offsets in host memory.
struct KGroupedCall {
  const TensorView &a, *sfa, &b, *sfb, &d;
  const std::vector<int64_t>& ks;
  const TensorView& c;
  ScaleRecipe ra, rb;
  const std::vector<int64_t>* ends;
  const TensorView* device_ends;
};

// The validated call: G groups of M x N outputs over sum_k rows of a and b.
struct KGroupedShape {
  Formats f;
  int64_t groups, sum_k, m, n, align;
};

// a [sum K, M], b [sum K, N]; d fp32 [G, M, N], c like d. The K ranges are checked by the caller.
KGroupedShape validate_operands(const KGroupedCall& k, int64_t groups) {
  api::require_rank(k.a, "a", 2);
  api::require_rank(k.b, "b", 2);
  api::require_rank(k.d, "d", 3);
  const Formats f = api::formats(k.a, k.sfa, k.b, k.sfb);
  const KGroupedShape sh{.f = f, .groups = groups, .sum_k = f.a.rows, .m = f.a.cols, .n = f.b.cols, .align = 0};
  return sh;
}

void validate_outputs(const KGroupedCall& k, const KGroupedShape& sh) {
  DGA_REQUIRE(sh.f.b.rows == sh.sum_k, kValue, "b", "expected ", sh.sum_k, " rows (sum of K) like a, got ",
              k.b.shape_str());
  api::require_dtype(k.d, "d", {DType::kFP32});
  api::require_shape(k.d, "d", {sh.groups, sh.m, sh.n});
  api::require_dtype(k.c, "c", {DType::kFP32});
  api::require_shape(k.c, "c", {sh.groups, sh.m, sh.n});
}

// ---- NPU target --------------------------------------------------------------------------------

// Scales of an NPU K-grouped FP8 GEMM, indexed by global K (KGroupedProblems): MX scale pairs, int16
// [ceil(sum K / 64), MN] (pair p covers K [64p, 64p + 64)), or float32 [sum K / 128, MN] when every
// group's K is a multiple of 128 (then group g's first block row is its start / 128).
block::Scaling npu_k_grouped_scales(const TensorView& sfa, const TensorView& sfb, const std::vector<int64_t>& ks,
                                    int64_t align, ScaleRecipe r, int64_t m, int64_t n, int64_t sum_k) {
  DGA_REQUIRE(
      !ks.empty(), kNotImplemented, "use_psum_layout",
      "K-grouped FP8 with the psum layout has no NPU kernel yet (its group sizes are only known on the device)");
  const bool fp32 = sfa.dtype == DType::kFP32;
  const int64_t unit = fp32 ? r.gran_k : int64_t(arch::MxFormat::kMxBaseK);  // K per scale row
  DGA_REQUIRE(r.gran_k == (fp32 ? api::kBlockGranK : int64_t(arch::MxFormat::kMxBlockK)), kValue, "recipe",
              "the NPU takes float32 scales per ", api::kBlockGranK, " K values or MX scales (gran_k ",
              arch::MxFormat::kMxBlockK, "), got ", core::name(sfa.dtype), " with gran_k ", r.gran_k);
  for (size_t g = 0; g < ks.size(); ++g)
    DGA_REQUIRE(ks[g] % unit == 0, kNotImplemented, "ks", "group ", g, " has K = ", ks[g],
                "; K-grouped FP8 on the NPU ", "needs every group's K to be a multiple of ", unit, " (alignment ",
                align, ")");
  const int64_t rows = layout::ceil_div(sum_k, unit);
  const auto ref = [&](const TensorView& sf, const char* arg, int64_t mn) {
    api::require_dtype(sf, arg, {fp32 ? DType::kFP32 : DType::kInt16});
    api::require_shape(sf, arg, {rows, mn});
    if (fp32)
      return layout::ScaleRef{.base = sf.ptr(),
                              .ue8m0 = false,
                              .pack = 1,
                              .mn_stride = sf.strides[1],
                              .k_stride = sf.strides[0],
                              .gran_mn = 1,
                              .gran_k = r.gran_k};
    DGA_REQUIRE(sf.strides[1] == 1, kValue, arg, "expected MN-contiguous scale pairs, got strides ", sf.strides_str());
    constexpr int64_t kPair = arch::MxFormat::kMxScalesPerPack;
    return layout::ScaleRef{.base = sf.ptr(),
                            .ue8m0 = true,
                            .pack = int(kPair),
                            .mn_stride = kPair,
                            .k_stride = sf.strides[0] * kPair,
                            .gran_mn = 1,
                            .gran_k = arch::MxFormat::kMxBlockK};
  };
  return {.enabled = true, .a = ref(sfa, "sfa", m), .b = ref(sfb, "sfb", n)};
}

// NPU: the groups' end offsets are a device tensor the kernel reads (no host sync); the checks that need
// their values are the host's only. ks (when given, on the host) checked against the alignment and sum K.
KGroupedShape validate_npu(const KGroupedCall& k) {
  const TensorView* ends = k.device_ends;
  api::require_rank(k.a, "a", 2);
  api::require_rank(k.b, "b", 2);
  api::require_rank(k.d, "d", 3);
  DGA_REQUIRE(ends != nullptr, kValue, "grouped_layout",
              "the NPU kernel reads the groups' end offsets from an int32 "
              "device tensor (the Python layer builds it from ks_cpu)");
  api::require_dtype(*ends, "grouped_layout", {DType::kInt32});
  DGA_REQUIRE(ends->ndim == 1 && ends->shape[0] > 0 && ends->is_contiguous(), kValue, "grouped_layout",
              "expected a contiguous int32 [G] of end offsets, got ", ends->shape_str());
  KGroupedShape sh = validate_operands(k, ends->shape[0]);
  validate_outputs(k, sh);
  DGA_REQUIRE(k.d.is_contiguous() && k.c.is_contiguous(), kValue, k.d.is_contiguous() ? "c" : "d",
              "must be contiguous");
  api::validate_output(group_view(k.d, 0), nullptr, sh.m, sh.n,
                       {{"a", &k.a}, {"b", &k.b}, {"sfa", k.sfa}, {"sfb", k.sfb}});
  sh.align = api::k_grouped_alignment();
  int64_t total = 0;
  for (size_t g = 0; g < k.ks.size(); ++g) {
    DGA_REQUIRE(k.ks[g] >= 0 && k.ks[g] % sh.align == 0, kValue, "ks", "group ", g, " has K = ", k.ks[g],
                ", which is not a non-negative multiple of the alignment ", sh.align);
    total += k.ks[g];
  }
  DGA_REQUIRE(k.ks.empty() || total == sh.sum_k, kValue, "ks", "sums to ", total, " but a and b have ", sh.sum_k,
              " rows");
  return sh;
}

void dispatch_npu(const KGroupedCall& k) {
  const KGroupedShape sh = validate_npu(k);
  const int a_bits = tile::operand_bits(sh.f.a.fmt), b_bits = tile::operand_bits(sh.f.b.fmt);
  kernel::KGroupedProblems<kernel::HostRows> problems{.a = api::matrix(k.a, a_bits, true),
                                                      .b = api::matrix(k.b, b_bits, true),
                                                      .e = api::epilogue(group_view(k.d, 0), &k.c),
                                                      .d_group = k.d.strides[0],
                                                      .c_group = k.c.strides[0],
                                                      .groups = sh.groups,
                                                      .align = sh.align,
                                                      .ends = {k.device_ends->as<const int32_t>()}};
  if (sh.f.scaled) problems.scaling = npu_k_grouped_scales(*k.sfa, *k.sfb, k.ks, sh.align, k.ra, sh.m, sh.n, sh.sum_k);
  api::npu_k_grouped_gemm(problems, {.a = sh.f.a.fmt, .b = sh.f.b.fmt}, *k.device_ends, k.d, k.c);
}

// ---- host target -------------------------------------------------------------------------------

// Host: the validated call and each group's K range [start, size).
struct KGroupedPlan {
  KGroupedShape sh;
  std::vector<std::pair<int64_t, int64_t>> spans;
};

// Scaled: one gran_k for both sides; fp32 scales [sum of the groups' K blocks, MN].
void validate_host_scales(const KGroupedCall& k, const KGroupedPlan& p) {
  if (!p.sh.f.scaled) return;
  api::check_recipe(k.ra, "recipe_a");
  api::check_recipe(k.rb, "recipe_b");
  DGA_REQUIRE(k.ra.gran_k == k.rb.gran_k, kValue, "recipe_b", "K-grouped GEMMs need one gran_k for both sides");
  int64_t sf_rows = 0;
  for (const auto& [start, kg] : p.spans) sf_rows += layout::ceil_div(kg, k.ra.gran_k);
  api::require_dtype(*k.sfa, "sfa", {DType::kFP32});
  api::require_dtype(*k.sfb, "sfb", {DType::kFP32});
  api::require_shape(*k.sfa, "sfa", {sf_rows, p.sh.m});
  api::require_shape(*k.sfb, "sfb", {sf_rows, p.sh.n});
}

KGroupedPlan validate_host(const KGroupedCall& k) {
  const int64_t groups = int64_t(k.ends ? k.ends->size() : k.ks.size());
  KGroupedPlan p{.sh = validate_operands(k, groups), .spans = {}};
  DGA_REQUIRE(groups > 0, kValue, k.ends ? "grouped_layout" : "ks", "needs at least one group");
  validate_outputs(k, p.sh);
  p.sh.align = api::k_grouped_alignment();
  p.spans = k_groups(k.ks, k.ends, p.sh.align, p.sh.sum_k);
  validate_host_scales(k, p);
  for (int64_t g = 0; g < groups; ++g) {
    api::validate_output(group_view(k.d, g), nullptr, p.sh.m, p.sh.n,
                         {{"a", &k.a}, {"b", &k.b}, {"sfa", k.sfa}, {"sfb", k.sfb}});
    const TensorView cg = group_view(k.c, g);
    api::validate_output(group_view(k.d, g), &cg, p.sh.m, p.sh.n, {});
  }
  return p;
}

// One problem per non-empty group (an empty group leaves D[g] = C[g], written here); fp32 scales by group:
// element (mn, kb) of group g at row r0 + kb, column mn, r0 the K blocks of the groups before it.
std::vector<kernel::GemmProblem> plan_host(const KGroupedCall& k, const KGroupedPlan& p) {
  const int a_bits = tile::operand_bits(p.sh.f.a.fmt), b_bits = tile::operand_bits(p.sh.f.b.fmt);
  const int64_t m = p.sh.m, n = p.sh.n;
  std::vector<kernel::GemmProblem> problems;
  int64_t r0 = 0;
  for (int64_t g = 0; g < p.sh.groups; ++g) {
    const auto [k0, kg] = p.spans[size_t(g)];
    const TensorView dg = group_view(k.d, g), cg = group_view(k.c, g);
    if (kg == 0) {
      api::trivial_gemm({m, n, 0}, dg, &cg);
      continue;
    }
    block::Scaling s{};
    if (p.sh.f.scaled) {
      const auto ref = [&](const TensorView& sf, int64_t gran_k) {
        return layout::ScaleRef{.base = static_cast<const float*>(sf.ptr()) + r0 * sf.strides[0],
                                .ue8m0 = false,
                                .pack = 1,
                                .mn_stride = sf.strides[1],
                                .k_stride = sf.strides[0],
                                .gran_mn = 1,
                                .gran_k = gran_k};
      };
      s = {.enabled = true, .a = ref(*k.sfa, k.ra.gran_k), .b = ref(*k.sfb, k.rb.gran_k)};
      r0 += layout::ceil_div(kg, k.ra.gran_k);
    }
    problems.push_back({.a = api::matrix(k.a, a_bits, true).block(0, k0, m, kg),
                        .b = api::matrix(k.b, b_bits, true).block(0, k0, n, kg),
                        .epilogue = api::epilogue(dg, &cg),
                        .scaling = s});
  }
  return problems;
}

void dispatch_host(const KGroupedCall& k) {
  const KGroupedPlan p = validate_host(k);
  std::vector<kernel::GemmProblem> problems = plan_host(k, p);
  const bool fold = p.sh.f.scaled && api::fold_scales(problems);  // as in m_grouped_gemm_contiguous
  api::launch_grouped("k_grouped_gemm", problems, p.sh.f,
                      {.avg_m = p.sh.m,
                       .n = p.sh.n,
                       .k = std::max<int64_t>(1, p.sh.sum_k / p.sh.groups),
                       .d_bytes = kFp32Bytes,
                       .acc = true,
                       .promote_k = fold ? 0 : k.ra.gran_k});
}

// ---- K-grouped FP8, K-major blocks -------------------------------------------------------------

constexpr int64_t kFp8GranK = 128;  // upstream's only recipe for this layout: (1, 1, 128)

struct Fp8Call {
  const TensorView &a, &sfa, &b, &sfb, &d;
  const std::vector<int64_t>& ks;
  const TensorView& c;
};

// The validated call: G groups of M x N outputs, sum_k K values in all; the scales of K = 0.
struct Fp8Shape {
  bool npu;
  int64_t groups, m, n, sum_k;
  layout::ScaleRef sa, sb;
};

int64_t validate_fp8_ks(const std::vector<int64_t>& ks) {
  int64_t sum_k = 0;
  for (size_t g = 0; g < ks.size(); ++g) {
    DGA_REQUIRE(ks[g] >= 0 && ks[g] % kFp8GranK == 0, kValue, "ks", "group ", g, " has K = ", ks[g],
                ", which is not a non-negative multiple of ", kFp8GranK);
    sum_k += ks[g];
  }
  return sum_k;
}

Fp8Shape validate_fp8(const Fp8Call& k) {
  api::require_same_device({{"a", &k.a}, {"sfa", &k.sfa}, {"b", &k.b}, {"sfb", &k.sfb}, {"d", &k.d}, {"c", &k.c}});
  const bool npu = api::on_npu_target(k.a);
  if (!npu) api::require_host(k.a, "a");
  api::require_dtype(k.a, "a", {DType::kFP8E4M3, DType::kFP8E5M2});
  api::require_dtype(k.b, "b", {DType::kFP8E4M3, DType::kFP8E5M2});
  DGA_REQUIRE(k.a.is_contiguous() && k.b.is_contiguous(), kValue, k.a.is_contiguous() ? "b" : "a",
              "must be a contiguous buffer of per-group K-major blocks");
  api::require_rank(k.d, "d", 3);
  Fp8Shape sh{
      .npu = npu, .groups = int64_t(k.ks.size()), .m = k.d.shape[1], .n = k.d.shape[2], .sum_k = 0, .sa = {}, .sb = {}};
  DGA_REQUIRE(sh.groups > 0 && k.d.shape[0] == sh.groups, kValue, "d", "expected [", sh.groups, ", M, N], got ",
              k.d.shape_str());
  sh.sum_k = validate_fp8_ks(k.ks);
  DGA_REQUIRE(k.a.numel() == sh.m * sh.sum_k, kValue, "a", "holds ", k.a.numel(),
              " values, expected M * sum(ks) = ", sh.m * sh.sum_k);
  DGA_REQUIRE(k.b.numel() == sh.n * sh.sum_k, kValue, "b", "holds ", k.b.numel(),
              " values, expected N * sum(ks) = ", sh.n * sh.sum_k);
  sh.sa = api::scales(k.sfa, "sfa", sh.m, sh.sum_k, {.gran_mn = 1, .gran_k = kFp8GranK});
  sh.sb = api::scales(k.sfb, "sfb", sh.n, sh.sum_k, {.gran_mn = 1, .gran_k = kFp8GranK});
  DGA_REQUIRE(k.sfa.dtype == DType::kFP32 && k.sfb.dtype == DType::kFP32, kType,
              k.sfa.dtype == DType::kFP32 ? "sfb" : "sfa", "this layout takes float32 scales");
  api::require_dtype(k.c, "c", {DType::kFP32});
  for (int64_t g = 0; g < sh.groups; ++g) {
    const TensorView cg = group_view(k.c, g);
    api::validate_output(group_view(k.d, g), &cg, sh.m, sh.n,
                         {{"a", &k.a}, {"b", &k.b}, {"sfa", &k.sfa}, {"sfb", &k.sfb}});
  }
  return sh;
}

// Group g: A_g [M, k_g] and B_g [N, k_g] row-major at offsets M * k0 and N * k0.
std::vector<kernel::GemmProblem> plan_fp8(const Fp8Call& k, const Fp8Shape& sh) {
  std::vector<kernel::GemmProblem> problems;
  int64_t k0 = 0;
  for (int64_t g = 0; g < sh.groups; ++g) {
    const int64_t kg = k.ks[size_t(g)];
    const TensorView dg = group_view(k.d, g), cg = group_view(k.c, g);
    const auto block = [&](const TensorView& t, int64_t rows) {
      return layout::MatrixRef{.base = t.data,
                               .origin = t.offset + rows * k0,
                               .rows = rows,
                               .cols = kg,
                               .row_stride = kg,
                               .col_stride = 1,
                               .bits = kFp8Bits};
    };
    problems.push_back(
        {.a = block(k.a, sh.m),
         .b = block(k.b, sh.n),
         .epilogue = api::epilogue(dg, &cg),
         .scaling = {.enabled = true, .a = sh.sa.shifted(0, k0 / kFp8GranK), .b = sh.sb.shifted(0, k0 / kFp8GranK)}});
    k0 += kg;
  }
  return problems;
}

tile::OperandFormat fp8_format(const TensorView& t) {
  return t.dtype == DType::kFP8E4M3 ? tile::OperandFormat::kE4M3 : tile::OperandFormat::kE5M2;
}

// NPU: one promoted FP8 GEMM per group on the stream (ks is on the host: no sync), all checked first.
void dispatch_fp8_npu(const Fp8Call& k, const Fp8Shape& sh, const std::vector<kernel::GemmProblem>& problems) {
  const block::Operands ops{.a = fp8_format(k.a), .b = fp8_format(k.b)};
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t g = 0; g < sh.groups; ++g) {
      const TensorView dg = group_view(k.d, g), cg = group_view(k.c, g);
      const api::GemmShape s{.m = sh.m, .n = sh.n, .k = k.ks[size_t(g)]};
      if (pass == 0) api::npu_gemm_check(s, problems[size_t(g)], ops, dg, &cg);
      else api::npu_gemm(s, problems[size_t(g)], ops, dg, &cg);
    }
}

// Host: empty groups leave D[g] = C[g]; the others are one launch.
void dispatch_fp8_host(const Fp8Call& k, const Fp8Shape& sh, std::vector<kernel::GemmProblem>& problems) {
  for (int64_t g = 0; g < sh.groups; ++g) {
    const TensorView cg = group_view(k.c, g);
    if (k.ks[size_t(g)] == 0) api::trivial_gemm({sh.m, sh.n, 0}, group_view(k.d, g), &cg);
  }
  std::erase_if(problems, [](const kernel::GemmProblem& p) { return p.a.cols == 0; });
  const bool fold = api::fold_scales(problems);  // as in m_grouped_gemm_contiguous
  const Formats f{.scaled = true,
                  .a = {.fmt = fp8_format(k.a), .rows = sh.m, .cols = 0},
                  .b = {.fmt = fp8_format(k.b), .rows = sh.n, .cols = 0}};
  api::launch_grouped("k_grouped_fp8_gemm_nt", problems, f,
                      {.avg_m = sh.m,
                       .n = sh.n,
                       .k = std::max<int64_t>(1, sh.sum_k / sh.groups),
                       .d_bytes = kFp32Bytes,
                       .acc = true,
                       .promote_k = fold ? 0 : kFp8GranK});
}

}  // namespace

void k_grouped_gemm(const TensorView& a, const TensorView* sfa, const TensorView& b, const TensorView* sfb,
                    const TensorView& d, const std::vector<int64_t>& ks, const TensorView& c, ScaleRecipe ra,
                    ScaleRecipe rb, const std::vector<int64_t>* psum_ends, const TensorView* device_ends) {
  api::require_same_device(
      {{"a", &a}, {"sfa", sfa}, {"b", &b}, {"sfb", sfb}, {"d", &d}, {"c", &c}, {"grouped_layout", device_ends}});
  KGroupedCall k{.a = a,
                 .sfa = sfa,
                 .b = b,
                 .sfb = sfb,
                 .d = d,
                 .ks = ks,
                 .c = c,
                 .ra = ra,
                 .rb = rb,
                 .ends = psum_ends,
                 .device_ends = device_ends};
  if (api::on_npu_target(a)) return dispatch_npu(k);
  api::require_host(a, "a");
  // The psum layout's end offsets in host memory, read here (Python gives them as the grouped_layout tensor).
  std::vector<int64_t> host_ends;
  if (!psum_ends && ks.empty() && device_ends) {
    DGA_REQUIRE(device_ends->ndim == 1, kValue, "grouped_layout", "expected an int32 [G] tensor of end offsets, got ",
                device_ends->shape_str());
    host_ends = api::read_int32(*device_ends, "grouped_layout", device_ends->shape[0]);
    k.ends = &host_ends;
  }
  dispatch_host(k);
}

void k_grouped_fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                           const TensorView& d, const std::vector<int64_t>& ks, const TensorView& c) {
  const Fp8Call k{.a = a, .sfa = sfa, .b = b, .sfb = sfb, .d = d, .ks = ks, .c = c};
  const Fp8Shape sh = validate_fp8(k);
  std::vector<kernel::GemmProblem> problems = plan_fp8(k, sh);
  if (sh.npu) return dispatch_fp8_npu(k, sh, problems);
  dispatch_fp8_host(k, sh, problems);
}

}  // namespace deepgemm_ascend
