// BF16 einsum expressions of upstream DeepGEMM, as batches of problems of the GEMM kernel.
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

// A 2-D view of dims (d0, d1) of a 3-D tensor at index i of the remaining dim.
TensorView plane(const TensorView& t, int fixed, int64_t i, int d0, int d1) {
  TensorView v = t;
  v.offset += i * t.strides[fixed];
  v.ndim = 2;
  v.shape[0] = t.shape[d0];
  v.shape[1] = t.shape[d1];
  v.strides[0] = t.strides[d0];
  v.strides[1] = t.strides[d1];
  return v;
}

void require_unit_last(const TensorView& t, const char* arg) {
  DGA_REQUIRE(t.size(-1) <= 1 || t.stride(-1) == 1, kValue, arg, "needs a unit last stride, got strides ",
              t.strides_str());
}

// On the NPU target the heads are the groups of one batched launch (the masked GEMM kernel with every
// group's M rows): group h's A, B, D and scales lie a constant stride after group 0's. values(t, dim):
// that stride in values of t's operand.
int64_t values(const TensorView& t, int dim, int bits) { return t.strides[dim] * core::itemsize(t.dtype) * 8 / bits; }

void npu_heads(const kernel::MaskedProblems<kernel::HostRows>& problems, const block::Operands& ops,
               const TensorView& d) {
  DGA_REQUIRE(problems.a.cols != 0, kNotImplemented, "a", "an empty contraction (K == 0) on the NPU target");
  api::npu_masked_gemm(problems, ops, nullptr, d, problems.a.rows);
}

// "bhr,hdr->bhd" (contract_last) and "bhd,hdr->bhr": one problem per head.
void heads(bool contract_r, const TensorView& a, const TensorView& b, const TensorView& d) {
  const int64_t batch = a.shape[0], h = a.shape[1], k = a.shape[2];
  DGA_REQUIRE(b.shape[0] == h, kValue, "b", "expected ", h, " heads like a, got ", b.shape_str());
  const int64_t bk = contract_r ? b.shape[2] : b.shape[1], n = contract_r ? b.shape[1] : b.shape[2];
  DGA_REQUIRE(bk == k, kValue, "b", "contracted size mismatch: a ", a.shape_str(), ", b ", b.shape_str());
  api::require_dtype(d, "d", {DType::kBF16});
  api::require_shape(d, "d", {batch, h, n});
  api::require_row_major_output(d, "d");
  api::require_no_overlap(d, "d", a, "a");
  api::require_no_overlap(d, "d", b, "b");
  if (batch == 0) return;
  if (api::on_npu_target(a)) {
    const TensorView b0 = contract_r ? plane(b, 0, 0, 1, 2) : plane(b, 0, 0, 2, 1);
    return npu_heads({api::matrix(plane(a, 1, 0, 0, 2), 16, false), api::matrix(b0, 16, false),
                      api::epilogue(plane(d, 1, 0, 0, 2), nullptr), values(a, 1, 16), values(b, 0, 16),
                      values(d, 1, 16), h, {nullptr}},
                     {}, d);
  }
  if (k == 0) {  // an empty contraction writes zeros
    for (int64_t i = 0; i < h; ++i) api::trivial_gemm({batch, n, 0}, plane(d, 1, i, 0, 2), nullptr);
    return;
  }
  std::vector<kernel::GemmProblem> problems;
  for (int64_t i = 0; i < h; ++i) {
    // B_h as [N, K]: "hdr" is [d, r]; contracting r takes it as is, contracting d transposes it.
    const TensorView bh = contract_r ? plane(b, 0, i, 1, 2) : plane(b, 0, i, 2, 1);
    problems.push_back({api::matrix(plane(a, 1, i, 0, 2), 16, false), api::matrix(bh, 16, false),
                        api::epilogue(plane(d, 1, i, 0, 2), nullptr)});
  }
  kernel::GemmArgs args{.problems = problems.data(), .num_problems = int64_t(problems.size()), .config = {}};
  api::launch_gemm("einsum", {.m = batch, .n = n, .k = k, .a_bits = core::kBf16Bits, .b_bits = core::kBf16Bits,
                              .l0_bits = core::kBf16Bits, .d_bytes = 2, .with_accumulation = false}, args);
}

// "bmk,bnk->mn": sum over the batch, one accumulating launch per batch entry into fp32.
void batch_sum(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c) {
  const int64_t s = a.shape[0], m = a.shape[1], k = a.shape[2], n = b.shape[1];
  DGA_REQUIRE(b.shape[0] == s && b.shape[2] == k, kValue, "b", "expected [", s, ", N, ", k, "], got ", b.shape_str());
  api::require_dtype(d, "d", {DType::kBF16, DType::kFP32});
  if (d.dtype == DType::kFP32)
    DGA_REQUIRE(c && c->same_view(d), kValue, "c", "a float32 d accumulates: pass c = d");
  else
    DGA_REQUIRE(c == nullptr, kValue, "c", "a bfloat16 d takes no c");
  api::validate_output(d, c, m, n, {{"a", &a}, {"b", &b}});
  if (api::on_npu_target(a)) {  // one accumulating launch per batch entry into an fp32 D (or workspace)
    if (m == 0 || n == 0) return;
    DGA_REQUIRE(d.dtype == DType::kFP32 || (s > 0 && k > 0), kNotImplemented, "a",
                "an empty sum (batch or K of 0) into a bfloat16 d on the NPU target");
    const TensorView acc = d.dtype == DType::kFP32 ? d : api::npu_fp32_workspace(d, m, n);
    for (int64_t i = 0; i < s; ++i) {  // a bf16 d: the workspace's first product overwrites it
      const bool add = d.dtype == DType::kFP32 || i > 0;
      const kernel::GemmProblem p{api::matrix(plane(a, 0, i, 1, 2), 16, false),
                                  api::matrix(plane(b, 0, i, 1, 2), 16, false),
                                  api::epilogue(acc, add ? &acc : nullptr)};
      api::npu_gemm({m, n, k}, p, {}, acc, add ? &acc : nullptr);
    }
    if (d.dtype != DType::kFP32) api::npu_convert_rows(acc, d);
    return;
  }
  std::vector<float> workspace;
  TensorView acc = d;
  if (d.dtype == DType::kBF16) {
    workspace.assign(size_t(m * n), 0.0f);
    acc.data = workspace.data();
    acc.offset = 0;
    acc.dtype = DType::kFP32;
    acc.strides[0] = n;
    acc.strides[1] = 1;
  }
  for (int64_t i = 0; i < s && k > 0; ++i) {
    const kernel::GemmProblem p{api::matrix(plane(a, 0, i, 1, 2), 16, false), api::matrix(plane(b, 0, i, 1, 2), 16, false),
                                api::epilogue(acc, &acc)};
    kernel::GemmArgs args{.problems = &p, .num_problems = 1, .config = {}};
    api::launch_gemm("einsum", {.m = m, .n = n, .k = k, .a_bits = core::kBf16Bits, .b_bits = core::kBf16Bits,
                                .l0_bits = core::kBf16Bits, .d_bytes = 4, .with_accumulation = true}, args);
  }
  if (d.dtype == DType::kBF16) {
    const auto out = api::mut_matrix(d);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) out.set(r, col, core::float_to_bf16(workspace[size_t(r * n + col)]));
  }
}

}  // namespace

void einsum(const std::string& expr, const TensorView& a, const TensorView& b, const TensorView& d,
            const TensorView* c) {
  const bool bhd = expr == "bhr,hdr->bhd", bhr = expr == "bhd,hdr->bhr", bmk = expr == "bmk,bnk->mn";
  DGA_REQUIRE(bhd || bhr || bmk, kValue, "expr", "unsupported expression '", expr,
              "' (supported: bhr,hdr->bhd  bhd,hdr->bhr  bmk,bnk->mn)");
  api::require_same_device({{"a", &a}, {"b", &b}, {"d", &d}, {"c", c}});
  if (!api::on_npu_target(a)) api::require_host(a, "a");
  api::require_dtype(a, "a", {DType::kBF16});
  api::require_dtype(b, "b", {DType::kBF16});
  api::require_rank(a, "a", 3);
  api::require_rank(b, "b", 3);
  require_unit_last(a, "a");
  require_unit_last(b, "b");
  if (bmk) return batch_sum(a, b, d, c);
  DGA_REQUIRE(c == nullptr, kValue, "c", "'", expr, "' takes no c");
  api::require_rank(d, "d", 3);
  heads(bhd, a, b, d);
}

void fp8_einsum(const std::string& expr, const TensorView& a, const TensorView& sfa, const TensorView& b,
                const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe ra, ScaleRecipe rb) {
  const bool bhd = expr == "bhr,hdr->bhd", bhr = expr == "bhd,hdr->bhr", hdr = expr == "bhd,bhr->hdr";
  DGA_REQUIRE(bhd || bhr || hdr, kValue, "expr", "unsupported expression '", expr,
              "' (supported: bhr,hdr->bhd  bhd,hdr->bhr  bhd,bhr->hdr)");
  api::require_same_device({{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"c", c}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  for (const auto& [t, arg] : {std::pair{&a, "a"}, std::pair{&b, "b"}}) {
    api::require_dtype(*t, arg, {DType::kFP8E4M3});
    api::require_rank(*t, arg, 3);
  }
  for (const auto& [t, arg] : {std::pair{&sfa, "sfa"}, std::pair{&sfb, "sfb"}}) {
    api::require_dtype(*t, arg, {DType::kFP32});
    api::require_rank(*t, arg, 3);
  }
  api::check_recipe(ra, "recipe");
  api::check_recipe(rb, "recipe");
  api::require_rank(d, "d", 3);
  // Per head h: A_h [M, K], B_h [N, K] (views of the 3-D operands), scales [rows, K blocks], D_h [M, N].
  const int64_t heads = hdr ? a.shape[1] : b.shape[0];
  struct Views {
    TensorView a, sa, b, sb, d;
  };
  auto views = [&](int64_t h) -> Views {
    if (bhd) return {.a = plane(a, 1, h, 0, 2), .sa = plane(sfa, 1, h, 0, 2), .b = plane(b, 0, h, 1, 2),
                     .sb = plane(sfb, 0, h, 1, 2), .d = plane(d, 1, h, 0, 2)};
    if (bhr) return {.a = plane(a, 1, h, 0, 2), .sa = plane(sfa, 1, h, 0, 2), .b = plane(b, 0, h, 2, 1),
                     .sb = plane(sfb, 0, h, 2, 1), .d = plane(d, 1, h, 0, 2)};
    return {.a = plane(a, 1, h, 2, 0), .sa = plane(sfa, 1, h, 2, 0), .b = plane(b, 1, h, 2, 0),
            .sb = plane(sfb, 1, h, 2, 0), .d = plane(d, 0, h, 1, 2)};
  };
  DGA_REQUIRE((hdr ? b.shape[1] : b.shape[0]) == heads && (hdr ? d.shape[0] : d.shape[1]) == heads &&
                  (hdr || a.shape[1] == heads),
              kValue, "b", "head counts differ: a ", a.shape_str(), ", b ", b.shape_str(), ", d ", d.shape_str());
  if (hdr)
    DGA_REQUIRE(d.dtype == DType::kFP32 && c && c->same_view(d), kValue, "c",
                "'bhd,bhr->hdr' accumulates into a float32 d: pass c = d");
  std::vector<kernel::GemmProblem> problems;
  const Views v0 = views(0);
  const int64_t m = v0.a.shape[0], k = v0.a.shape[1], n = v0.b.shape[0];
  for (int64_t h = 0; h < heads; ++h) {
    const Views v = views(h);
    DGA_REQUIRE(v.b.shape[1] == k, kValue, "b", "contracted size mismatch: a ", a.shape_str(), ", b ", b.shape_str());
    const TensorView ch = c ? (hdr ? plane(*c, 0, h, 1, 2) : plane(*c, 1, h, 0, 2)) : TensorView{};
    api::validate_output(v.d, c ? &ch : nullptr, m, n, {{"a", &a}, {"b", &b}, {"sfa", &sfa}, {"sfb", &sfb}});
    problems.push_back({api::matrix(v.a, 8, false), api::matrix(v.b, 8, false), api::epilogue(v.d, c ? &ch : nullptr),
                        {true, api::scales(v.sa, "sfa", m, k, ra), api::scales(v.sb, "sfb", n, k, rb)}});
  }
  if (m == 0 || n == 0) return;
  if (npu && (hdr || c != nullptr)) {  // one promoted FP8 GEMM per head (D_h = C_h + A_h B_h^T), all checked first
    const block::Operands ops{tile::OperandFormat::kE4M3, tile::OperandFormat::kE4M3};
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t h = 0; h < heads; ++h) {
        const TensorView ch = c ? (hdr ? plane(*c, 0, h, 1, 2) : plane(*c, 1, h, 0, 2)) : TensorView{};
        const TensorView dh = views(h).d;
        if (pass == 0) api::npu_gemm_check({m, n, k}, problems[size_t(h)], ops, dh, c ? &ch : nullptr);
        else api::npu_gemm({m, n, k}, problems[size_t(h)], ops, dh, c ? &ch : nullptr);
      }
    return;
  }
  if (npu) {  // one masked launch over the heads
    constexpr int kFp8 = 8, kFloat = sizeof(float);
    kernel::MaskedProblems<kernel::HostRows> mp{.a = problems[0].a, .b = problems[0].b, .e = problems[0].epilogue,
                                                .a_group = values(a, 1, kFp8), .b_group = values(b, 0, kFp8),
                                                .d_group = values(d, 1, int(core::itemsize(d.dtype)) * 8),
                                                .groups = heads, .rows = {nullptr}, .scaling = problems[0].scaling,
                                                .sfa_group = sfa.strides[1] * kFloat,
                                                .sfb_group = sfb.strides[0] * kFloat};
    return npu_heads(mp, {tile::OperandFormat::kE4M3, tile::OperandFormat::kE4M3}, d);
  }
  if (k == 0) {
    for (int64_t h = 0; h < heads; ++h) {
      const TensorView ch = c ? (hdr ? plane(*c, 0, h, 1, 2) : plane(*c, 1, h, 0, 2)) : TensorView{};
      api::trivial_gemm({m, n, 0}, views(h).d, c ? &ch : nullptr);
    }
    return;
  }
  kernel::GemmArgs args{.problems = problems.data(), .num_problems = int64_t(problems.size()), .config = {},
                        .operands = {tile::OperandFormat::kE4M3, tile::OperandFormat::kE4M3}, .scaled = true};
  api::launch_gemm("fp8_einsum", {.m = m, .n = n, .k = k, .a_bits = core::kFp8Bits, .b_bits = core::kFp8Bits,
                                  .l0_bits = core::kBf16Bits, .d_bytes = int(core::itemsize(d.dtype)),
                                  .with_accumulation = c != nullptr, .num_cores = 1,
                                  .promote_k = std::min(ra.gran_k, rb.gran_k)}, args);
}

}  // namespace deepgemm_ascend
