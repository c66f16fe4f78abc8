// HyperConnection pre-norm GEMM. The bf16 cube multiplies fp32 B as two bf16 terms, hi = bf16(b) and
// lo = bf16(b - hi): a @ b^T ~ a @ hi^T + a @ lo^T with exact products and fp32 accumulation, b carried
// with 16 significant bits (more than TF32's 11; docs/MIGRATION.md). The vector pass that writes hi, lo
// and the sums of squares is one source for both targets (kernel/hc_prenorm.hpp); the two products are
// the BF16 GEMM kernel's.
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/kernel/hc_prenorm.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/host/host_hc_vector.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

constexpr int64_t kKBlock = 64;  // K granularity of the splits
constexpr int64_t kMaxN = 128;
constexpr int64_t kNMultiple = 8;
using core::kBf16Bits;
using core::kFp32Bytes;

// A host fp32 [rows, cols] view (any row stride) set to 0.
void zero_fp32(const TensorView& t) {
  auto* p = t.as<float>();
  for (int64_t r = 0; r < t.shape[0]; ++r)
    for (int64_t c = 0; c < t.shape[1]; ++c) p[r * t.stride(0) + c * t.stride(1)] = 0.0f;
}

TensorView slice(const TensorView& t, int64_t s) {  // [S, ...][s], or t itself when unsplit
  return s < 0 ? t : api::index_leading(t, s);
}

DgaMatrix device_matrix(const TensorView& t, int64_t rows, int64_t cols) {
  return {uint64_t(reinterpret_cast<uintptr_t>(t.ptr())), rows, cols, t.stride(-2), 1};
}

// The vector pass's parameters: D is zeroed and the ends written when given (the NPU's accumulating
// launches); hi and lo are [N, K] each at `hi_lo`.
DgaHcPrenormParams vector_params(const TensorView& a, const TensorView& b, const TensorView& d,
                                 const TensorView& sqr_sum, int64_t splits, bool split_d, uint16_t* hi_lo,
                                 int32_t* ends, bool zero_d) {
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[0];
  const DgaMatrix dm = zero_d ? device_matrix(d, m, n) : DgaMatrix{0, m, n, n, 1};
  return {device_matrix(a, m, k),
          device_matrix(b, n, k),
          dm,
          api::addr(hi_lo),
          api::addr(hi_lo + n * k),
          api::addr(sqr_sum.ptr()),
          api::addr(ends),
          split_d ? d.stride(0) : 0,
          splits,
          kKBlock};
}

// On the NPU target, one mix launch: its vector cores run the vector pass (hi, lo, the zeroed D, the ends)
// and tell the cube cores, which then run the hi and lo products as a K-grouped BF16 GEMM (one group per
// split, the ends read on the device; each tile's A is multiplied by hi and by lo into one L0C tile) adding
// onto the zeroed D, while the vector cores sum the squares of the same tiles' rows (A read from HBM once);
// no host sync.
void npu_hc_prenorm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                    int64_t splits, bool split_d) {
  const api::NpuDevice dev(d, "d");
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[0];
  if (m == 0) return;
  constexpr size_t kAlign = 512;
  const size_t part = (size_t(n * k) * sizeof(uint16_t) + kAlign - 1) / kAlign * kAlign;
  auto* ws = static_cast<uint8_t*>(dev.workspace(2 * part + size_t(splits) * sizeof(int32_t)));
  auto* hi_lo = reinterpret_cast<uint16_t*>(ws);
  auto* ends = reinterpret_cast<int32_t*>(ws + 2 * part);
  DgaHcPrenormParams p = vector_params(a, b, d, sqr_sum, splits, split_d, hi_lo, ends, true);
  p.lo = p.hi + part;
  TensorView ends_view = d;
  ends_view.data = ends, ends_view.offset = 0, ends_view.dtype = DType::kInt32, ends_view.ndim = 1;
  ends_view.shape[0] = splits, ends_view.strides[0] = 1;
  const TensorView d0 = slice(d, split_d ? 0 : -1);
  const auto term = [&](size_t i) {  // hi (0) or lo (1): bf16 [N, K]
    return layout::MatrixRef{.base = ws + i * part, .origin = 0, .rows = n, .cols = k, .row_stride = k,
                             .col_stride = 1, .bits = core::kBf16Bits};
  };
  const int64_t d_split = split_d ? d.stride(0) : 0;
  const kernel::KGroupedProblems<kernel::HostRows> problems{.a = api::matrix(a, core::kBf16Bits, false),
                                                            .b = term(0),
                                                            .e = api::epilogue(d0, &d0),
                                                            .d_group = d_split,
                                                            .c_group = d_split,
                                                            .groups = splits,
                                                            .align = kKBlock,
                                                            .ends = {},
                                                            .b2 = term(1)};
  api::npu_hc_prenorm_gemm(problems, ends_view, d, p);
}

// The validated call: d [M, N] = a [M, K] @ b [N, K]^T in `splits` K splits (split_d: d and sqr_sum
// carry a leading split dimension).
struct HcShape {
  int64_t m, n, k, splits;
  bool split_d;
};

// a bf16 [M, K], b fp32 [N, K], both K-major; K a multiple of the split granularity, N up to kMaxN.
HcShape validate_operands(const TensorView& a, const TensorView& b, int64_t num_splits) {
  api::require_dtype(a, "a", {DType::kBF16});
  api::require_dtype(b, "b", {DType::kFP32});
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 2);
  DGA_REQUIRE(a.size(-1) <= 1 || a.stride(-1) == 1, kValue, "a", "must be K-major (stride(-1) == 1)");
  DGA_REQUIRE(b.size(-1) <= 1 || b.stride(-1) == 1, kValue, "b", "must be K-major (stride(-1) == 1)");
  const HcShape sh{.m = a.shape[0],
                   .n = b.shape[0],
                   .k = a.shape[1],
                   .splits = num_splits > 0 ? num_splits : 1,
                   .split_d = num_splits > 0};
  DGA_REQUIRE(b.shape[1] == sh.k, kValue, "b", "K mismatch: a has K=", sh.k, ", b ", b.shape_str());
  DGA_REQUIRE(sh.n > 0 && sh.n <= kMaxN && sh.n % kNMultiple == 0, kValue, "b", "N must be a positive multiple of ",
              kNMultiple, " up to ", kMaxN, ", got ", sh.n);
  DGA_REQUIRE(sh.k > 0 && sh.k % kKBlock == 0, kValue, "a", "K must be a positive multiple of ", kKBlock, ", got ",
              sh.k);
  // As upstream, any number of splits: a split with no K block writes zeros to its D and sqr_sum.
  DGA_REQUIRE(num_splits >= 0, kValue, "num_splits", "must be a positive int or None, got ", num_splits);
  return sh;
}

// d fp32 [M, N] and sqr_sum fp32 [M] (split: [S, M, N] and [S, M]), overlapping no input.
void validate_outputs(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                      const HcShape& sh) {
  api::require_dtype(d, "d", {DType::kFP32});
  api::require_dtype(sqr_sum, "sqr_sum", {DType::kFP32});
  if (sh.split_d) {
    api::require_shape(d, "d", {sh.splits, sh.m, sh.n});
    api::require_shape(sqr_sum, "sqr_sum", {sh.splits, sh.m});
  } else {
    api::require_shape(d, "d", {sh.m, sh.n});
    api::require_shape(sqr_sum, "sqr_sum", {sh.m});
  }
  DGA_REQUIRE(sqr_sum.is_contiguous(), kValue, "sqr_sum", "must be contiguous");
  for (int64_t s = 0; s < sh.splits; ++s)
    api::validate_output(slice(d, sh.split_d ? s : -1), nullptr, sh.m, sh.n,
                         {{"a", &a}, {"b", &b}, {"sqr_sum", &sqr_sum}});
  api::require_no_overlap(sqr_sum, "sqr_sum", a, "a");
  api::require_no_overlap(sqr_sum, "sqr_sum", d, "d");
}

// The GEMMs of one product (hi: part 0, lo: part 1, adding onto hi's): one problem per split with a K
// block (kernel::hc_split_range); a split with none has D = 0, written with the hi part.
std::vector<kernel::GemmProblem> plan_part(const TensorView& a, const TensorView& d, const HcShape& sh,
                                           const uint16_t* hi_lo, int64_t part) {
  const int64_t blocks = sh.k / kKBlock;
  const layout::MatrixRef am = api::matrix(a, kBf16Bits, false);
  const layout::MatrixRef bm{.base = hi_lo + part * sh.n * sh.k,
                             .origin = 0,
                             .rows = sh.n,
                             .cols = sh.k,
                             .row_stride = sh.k,
                             .col_stride = 1,
                             .bits = kBf16Bits};
  std::vector<kernel::GemmProblem> problems;
  for (int64_t s = 0; s < sh.splits; ++s) {
    const TensorView ds = slice(d, sh.split_d ? s : -1);
    const kernel::HcKRange r = kernel::hc_split_range(blocks, sh.splits, s);
    const int64_t k0 = r.first * kKBlock, ks = r.count * kKBlock;
    if (ks == 0) {  // more splits than K blocks, as upstream allows
      if (part == 0) zero_fp32(ds);
      continue;
    }
    problems.push_back({.a = am.block(0, k0, sh.m, ks),
                        .b = bm.block(0, k0, sh.n, ks),
                        .epilogue = api::epilogue(ds, part == 1 ? &ds : nullptr)});
  }
  return problems;
}

// Host: the vector pass (hi, lo and the sums of squares, spread over the AI cores), then the hi and lo
// products.
void dispatch_host(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                   const HcShape& sh) {
  std::vector<uint16_t> hi_lo(size_t(2 * sh.n * sh.k));
  const DgaHcPrenormParams vp = vector_params(a, b, d, sqr_sum, sh.splits, sh.split_d, hi_lo.data(), nullptr, false);
  auto& backend = runtime::host_backend();
  const int64_t steps =
      layout::imax(sh.n, layout::ceil_div(sh.m, tile::host::HostHcVector::HcPrenorm::kSqrRows) * sh.splits);
  backend.launch("hc_prenorm_vector", int(std::min<int64_t>(steps, backend.num_ai_cores())),
                 [&](tile::host::Core& core) { kernel::hc_prenorm_vector<tile::host::HostHcVector>(core, vp); });
  for (int64_t part = 0; part < 2; ++part) {
    std::vector<kernel::GemmProblem> problems = plan_part(a, d, sh, hi_lo.data(), part);
    kernel::GemmArgs args{.problems = problems.data(), .num_problems = int64_t(problems.size()), .config = {}};
    api::launch_gemm("tf32_hc_prenorm_gemm",
                     {.m = sh.m,
                      .n = sh.n,
                      .k = sh.k / sh.splits,
                      .a_bits = kBf16Bits,
                      .b_bits = kBf16Bits,
                      .l0_bits = kBf16Bits,
                      .d_bytes = kFp32Bytes,
                      .with_accumulation = part == 1},
                     args);
  }
}

}  // namespace

void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          int64_t num_splits) {
  api::require_same_device({{"a", &a}, {"b", &b}, {"d", &d}, {"sqr_sum", &sqr_sum}});
  const HcShape sh = validate_operands(a, b, num_splits);
  validate_outputs(a, b, d, sqr_sum, sh);
  if (sh.m == 0) return;
  if (api::on_npu_target(a)) return npu_hc_prenorm(a, b, d, sqr_sum, sh.splits, sh.split_d);
  api::require_host(a, "a");
  dispatch_host(a, b, d, sqr_sum, sh);
}

}  // namespace deepgemm_ascend
