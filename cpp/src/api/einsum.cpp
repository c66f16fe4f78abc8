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

using core::kBf16Bits;
using core::kFp8Bits;

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
    return npu_heads({api::matrix(plane(a, 1, 0, 0, 2), core::kBf16Bits, false),
                      api::matrix(b0, core::kBf16Bits, false),
                      api::epilogue(plane(d, 1, 0, 0, 2), nullptr),
                      values(a, 1, 16),
                      values(b, 0, 16),
                      values(d, 1, 16),
                      h,
                      {nullptr}},
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
    problems.push_back({api::matrix(plane(a, 1, i, 0, 2), core::kBf16Bits, false),
                        api::matrix(bh, core::kBf16Bits, false), api::epilogue(plane(d, 1, i, 0, 2), nullptr)});
  }
  kernel::GemmArgs args{.problems = problems.data(), .num_problems = int64_t(problems.size()), .config = {}};
  api::launch_gemm("einsum",
                   {.m = batch,
                    .n = n,
                    .k = k,
                    .a_bits = core::kBf16Bits,
                    .b_bits = core::kBf16Bits,
                    .l0_bits = core::kBf16Bits,
                    .d_bytes = core::kBf16Bytes,
                    .with_accumulation = false},
                   args);
}

// "bmk,bnk->mn" on the NPU target: one accumulating launch per batch entry into an fp32 D (or workspace).
void npu_batch_sum(const TensorView& a, const TensorView& b, const TensorView& d) {
  const int64_t s = a.shape[0], m = a.shape[1], k = a.shape[2], n = b.shape[1];
  if (m == 0 || n == 0) return;
  DGA_REQUIRE(d.dtype == DType::kFP32 || (s > 0 && k > 0), kNotImplemented, "a",
              "an empty sum (batch or K of 0) into a bfloat16 d on the NPU target");
  const TensorView acc = d.dtype == DType::kFP32 ? d : api::npu_fp32_workspace(d, m, n);
  for (int64_t i = 0; i < s; ++i) {  // a bf16 d: the workspace's first product overwrites it
    const bool add = d.dtype == DType::kFP32 || i > 0;
    const kernel::GemmProblem p{.a = api::matrix(plane(a, 0, i, 1, 2), kBf16Bits, false),
                                .b = api::matrix(plane(b, 0, i, 1, 2), kBf16Bits, false),
                                .epilogue = api::epilogue(acc, add ? &acc : nullptr)};
    api::npu_gemm({.m = m, .n = n, .k = k}, p, {}, acc, add ? &acc : nullptr);
  }
  if (d.dtype != DType::kFP32) api::npu_convert_rows(acc, d);
}

// "bmk,bnk->mn" on the host: one accumulating launch per batch entry into fp32 (a workspace for bf16 d).
void host_batch_sum(const TensorView& a, const TensorView& b, const TensorView& d) {
  const int64_t s = a.shape[0], m = a.shape[1], k = a.shape[2], n = b.shape[1];
  using core::kFp32Bytes;
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
    const kernel::GemmProblem p{.a = api::matrix(plane(a, 0, i, 1, 2), kBf16Bits, false),
                                .b = api::matrix(plane(b, 0, i, 1, 2), kBf16Bits, false),
                                .epilogue = api::epilogue(acc, &acc)};
    kernel::GemmArgs args{.problems = &p, .num_problems = 1, .config = {}};
    api::launch_gemm("einsum",
                     {.m = m,
                      .n = n,
                      .k = k,
                      .a_bits = kBf16Bits,
                      .b_bits = kBf16Bits,
                      .l0_bits = kBf16Bits,
                      .d_bytes = kFp32Bytes,
                      .with_accumulation = true},
                     args);
  }
  if (d.dtype == DType::kBF16) {
    const auto out = api::mut_matrix(d);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) out.set(r, col, core::float_to_bf16(workspace[size_t(r * n + col)]));
  }
}

// "bmk,bnk->mn": sum over the batch, accumulated in fp32.
void batch_sum(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c) {
  const int64_t s = a.shape[0], m = a.shape[1], k = a.shape[2], n = b.shape[1];
  DGA_REQUIRE(b.shape[0] == s && b.shape[2] == k, kValue, "b", "expected [", s, ", N, ", k, "], got ", b.shape_str());
  api::require_dtype(d, "d", {DType::kBF16, DType::kFP32});
  if (d.dtype == DType::kFP32) DGA_REQUIRE(c && c->same_view(d), kValue, "c", "a float32 d accumulates: pass c = d");
  else DGA_REQUIRE(c == nullptr, kValue, "c", "a bfloat16 d takes no c");
  api::validate_output(d, c, m, n, {{"a", &a}, {"b", &b}});
  if (api::on_npu_target(a)) return npu_batch_sum(a, b, d);
  host_batch_sum(a, b, d);
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

namespace {

// The FP8 expressions: "bhr,hdr->bhd" and "bhd,hdr->bhr" (one GEMM per head over the batch rows) and
// "bhd,bhr->hdr" (per head, a contraction over the batch accumulated into a float32 d).
enum class Fp8Expr { kBhd, kBhr, kHdr };

struct Fp8EinsumCall {
  Fp8Expr expr;
  const TensorView &a, &sfa, &b, &sfb, &d, *c;
  ScaleRecipe ra, rb;
};

// Per head h: A_h [M, K], B_h [N, K] (views of the 3-D operands), scales [rows, K blocks], D_h [M, N].
struct HeadViews {
  TensorView a, sa, b, sb, d;
};

HeadViews head_views(const Fp8EinsumCall& e, int64_t h) {
  const TensorView &a = e.a, &sfa = e.sfa, &b = e.b, &sfb = e.sfb, &d = e.d;
  if (e.expr == Fp8Expr::kBhd)
    return {plane(a, 1, h, 0, 2), plane(sfa, 1, h, 0, 2), plane(b, 0, h, 1, 2), plane(sfb, 0, h, 1, 2),
            plane(d, 1, h, 0, 2)};
  if (e.expr == Fp8Expr::kBhr)
    return {plane(a, 1, h, 0, 2), plane(sfa, 1, h, 0, 2), plane(b, 0, h, 2, 1), plane(sfb, 0, h, 2, 1),
            plane(d, 1, h, 0, 2)};
  return {plane(a, 1, h, 2, 0), plane(sfa, 1, h, 2, 0), plane(b, 1, h, 2, 0), plane(sfb, 1, h, 2, 0),
          plane(d, 0, h, 1, 2)};
}

// C_h (null without c), in `storage`.
const TensorView* head_c(const Fp8EinsumCall& e, int64_t h, TensorView& storage) {
  if (!e.c) return nullptr;
  storage = e.expr == Fp8Expr::kHdr ? plane(*e.c, 0, h, 1, 2) : plane(*e.c, 1, h, 0, 2);
  return &storage;
}

// The validated call: `heads` GEMMs of M x N x K; where they run.
struct Fp8EinsumShape {
  bool npu;
  int64_t heads, m, n, k;
};

Fp8Expr parse_fp8_expr(const std::string& expr) {
  const bool bhd = expr == "bhr,hdr->bhd", bhr = expr == "bhd,hdr->bhr", hdr = expr == "bhd,bhr->hdr";
  DGA_REQUIRE(bhd || bhr || hdr, kValue, "expr", "unsupported expression '", expr,
              "' (supported: bhr,hdr->bhd  bhd,hdr->bhr  bhd,bhr->hdr)");
  return bhd ? Fp8Expr::kBhd : bhr ? Fp8Expr::kBhr : Fp8Expr::kHdr;
}

// a, b fp8 e4m3 3-D; sfa, sfb fp32 3-D; d 3-D; the heads agree. Returns where the call runs.
bool validate_fp8_operands(const Fp8EinsumCall& e) {
  api::require_same_device({{"a", &e.a}, {"sfa", &e.sfa}, {"b", &e.b}, {"sfb", &e.sfb}, {"d", &e.d}, {"c", e.c}});
  const bool npu = api::on_npu_target(e.a);
  if (!npu) api::require_host(e.a, "a");
  for (const auto& [t, arg] : {std::pair{&e.a, "a"}, std::pair{&e.b, "b"}}) {
    api::require_dtype(*t, arg, {DType::kFP8E4M3});
    api::require_rank(*t, arg, 3);
  }
  for (const auto& [t, arg] : {std::pair{&e.sfa, "sfa"}, std::pair{&e.sfb, "sfb"}}) {
    api::require_dtype(*t, arg, {DType::kFP32});
    api::require_rank(*t, arg, 3);
  }
  api::check_recipe(e.ra, "recipe");
  api::check_recipe(e.rb, "recipe");
  api::require_rank(e.d, "d", 3);
  return npu;
}

Fp8EinsumShape validate_fp8_einsum(const Fp8EinsumCall& e) {
  const bool npu = validate_fp8_operands(e), hdr = e.expr == Fp8Expr::kHdr;
  const TensorView &a = e.a, &b = e.b, &d = e.d;
  const int64_t heads = hdr ? a.shape[1] : b.shape[0];
  DGA_REQUIRE((hdr ? b.shape[1] : b.shape[0]) == heads && (hdr ? d.shape[0] : d.shape[1]) == heads &&
                  (hdr || a.shape[1] == heads),
              kValue, "b", "head counts differ: a ", a.shape_str(), ", b ", b.shape_str(), ", d ", d.shape_str());
  if (hdr)
    DGA_REQUIRE(d.dtype == DType::kFP32 && e.c && e.c->same_view(d), kValue, "c",
                "'bhd,bhr->hdr' accumulates into a float32 d: pass c = d");
  const HeadViews v0 = head_views(e, 0);
  const Fp8EinsumShape sh{.npu = npu, .heads = heads, .m = v0.a.shape[0], .n = v0.b.shape[0], .k = v0.a.shape[1]};
  for (int64_t h = 0; h < heads; ++h) {
    const HeadViews v = head_views(e, h);
    DGA_REQUIRE(v.b.shape[1] == sh.k, kValue, "b", "contracted size mismatch: a ", a.shape_str(), ", b ",
                b.shape_str());
    TensorView c_storage;
    api::validate_output(v.d, head_c(e, h, c_storage), sh.m, sh.n,
                         {{"a", &a}, {"b", &b}, {"sfa", &e.sfa}, {"sfb", &e.sfb}});
    api::scales(v.sa, "sfa", sh.m, sh.k, e.ra);
    api::scales(v.sb, "sfb", sh.n, sh.k, e.rb);
  }
  return sh;
}

// One scaled problem per head.
std::vector<kernel::GemmProblem> plan_fp8_einsum(const Fp8EinsumCall& e, const Fp8EinsumShape& sh) {
  std::vector<kernel::GemmProblem> problems;
  for (int64_t h = 0; h < sh.heads; ++h) {
    const HeadViews v = head_views(e, h);
    TensorView c_storage;
    problems.push_back({.a = api::matrix(v.a, kFp8Bits, false),
                        .b = api::matrix(v.b, kFp8Bits, false),
                        .epilogue = api::epilogue(v.d, head_c(e, h, c_storage)),
                        .scaling = {.enabled = true,
                                    .a = api::scales(v.sa, "sfa", sh.m, sh.k, e.ra),
                                    .b = api::scales(v.sb, "sfb", sh.n, sh.k, e.rb)}});
  }
  return problems;
}

constexpr block::Operands kFp8Operands{.a = tile::OperandFormat::kE4M3, .b = tile::OperandFormat::kE4M3};

// NPU with C (or the hdr contraction): one promoted FP8 GEMM per head (D_h = C_h + A_h B_h^T), all checked
// first; without: one masked launch over the heads.
void dispatch_fp8_npu(const Fp8EinsumCall& e, const Fp8EinsumShape& sh,
                      const std::vector<kernel::GemmProblem>& problems) {
  if (e.expr == Fp8Expr::kHdr || e.c != nullptr) {
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t h = 0; h < sh.heads; ++h) {
        TensorView c_storage;
        const TensorView* ch = head_c(e, h, c_storage);
        const TensorView dh = head_views(e, h).d;
        const api::GemmShape s{.m = sh.m, .n = sh.n, .k = sh.k};
        if (pass == 0) api::npu_gemm_check(s, problems[size_t(h)], kFp8Operands, dh, ch);
        else api::npu_gemm(s, problems[size_t(h)], kFp8Operands, dh, ch);
      }
    return;
  }
  constexpr int kFloat = sizeof(float);
  const kernel::GemmProblem& p0 = problems[0];
  const kernel::MaskedProblems<kernel::HostRows> mp{.a = p0.a,
                                                    .b = p0.b,
                                                    .e = p0.epilogue,
                                                    .a_group = values(e.a, 1, kFp8Bits),
                                                    .b_group = values(e.b, 0, kFp8Bits),
                                                    .d_group = values(e.d, 1, int(core::itemsize(e.d.dtype)) * 8),
                                                    .groups = sh.heads,
                                                    .rows = {nullptr},
                                                    .scaling = p0.scaling,
                                                    .sfa_group = e.sfa.strides[1] * kFloat,
                                                    .sfb_group = e.sfb.strides[0] * kFloat};
  npu_heads(mp, kFp8Operands, e.d);
}

// Host: K == 0 writes C (or zeros); otherwise one launch over the heads.
void dispatch_fp8_host(const Fp8EinsumCall& e, const Fp8EinsumShape& sh, std::vector<kernel::GemmProblem>& problems) {
  if (sh.k == 0) {
    for (int64_t h = 0; h < sh.heads; ++h) {
      TensorView c_storage;
      api::trivial_gemm({.m = sh.m, .n = sh.n, .k = 0}, head_views(e, h).d, head_c(e, h, c_storage));
    }
    return;
  }
  kernel::GemmArgs args{.problems = problems.data(),
                        .num_problems = int64_t(problems.size()),
                        .config = {},
                        .operands = kFp8Operands,
                        .scaled = true};
  api::launch_gemm("fp8_einsum",
                   {.m = sh.m,
                    .n = sh.n,
                    .k = sh.k,
                    .a_bits = kFp8Bits,
                    .b_bits = kFp8Bits,
                    .l0_bits = kBf16Bits,
                    .d_bytes = int(core::itemsize(e.d.dtype)),
                    .with_accumulation = e.c != nullptr,
                    .num_cores = 1,
                    .promote_k = std::min(e.ra.gran_k, e.rb.gran_k)},
                   args);
}

}  // namespace

void fp8_einsum(const std::string& expr, const TensorView& a, const TensorView& sfa, const TensorView& b,
                const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe ra, ScaleRecipe rb) {
  const Fp8EinsumCall e{
      .expr = parse_fp8_expr(expr), .a = a, .sfa = sfa, .b = b, .sfb = sfb, .d = d, .c = c, .ra = ra, .rb = rb};
  const Fp8EinsumShape sh = validate_fp8_einsum(e);
  std::vector<kernel::GemmProblem> problems = plan_fp8_einsum(e, sh);
  if (sh.m == 0 || sh.n == 0) return;
  if (sh.npu) return dispatch_fp8_npu(e, sh, problems);
  dispatch_fp8_host(e, sh, problems);
}

}  // namespace deepgemm_ascend
