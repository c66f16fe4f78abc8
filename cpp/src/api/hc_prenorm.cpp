// HyperConnection pre-norm GEMM. The bf16 cube multiplies fp32 B as two bf16 terms, hi = bf16(b) and
// lo = bf16(b - hi): a @ b^T ~ a @ hi^T + a @ lo^T with exact products and fp32 accumulation, b carried
// with 16 significant bits (more than TF32's 11; docs/MIGRATION.md). The vector pass that writes hi, lo
// and the sums of squares is one source for both targets (kernel/hc_prenorm.hpp); the two products are
// the BF16 GEMM kernel's.
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/kernel/hc_prenorm.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/tile/host_hc_vector.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

constexpr int64_t kKBlock = 64;   // K granularity of the splits
constexpr int64_t kMaxN = 128;
constexpr int64_t kNMultiple = 8;

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
  return {.addr = uint64_t(reinterpret_cast<uintptr_t>(t.ptr())), .rows = rows, .cols = cols,
          .row_stride = t.stride(-2), .col_stride = 1};
}

// The vector pass's parameters: D is zeroed and the ends written when given (the NPU's accumulating
// launches); hi and lo are [N, K] each at `hi_lo`.
DgaHcPrenormParams vector_params(const TensorView& a, const TensorView& b, const TensorView& d,
                                 const TensorView& sqr_sum, int64_t splits, bool split_d, uint16_t* hi_lo,
                                 int32_t* ends, bool zero_d) {
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[0];
  const auto addr = [](const void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); };
  const DgaMatrix dm = zero_d ? device_matrix(d, m, n) : DgaMatrix{.addr = 0, .rows = m, .cols = n, .row_stride = n,
                                                                   .col_stride = 1};
  return {.a = device_matrix(a, m, k), .b = device_matrix(b, n, k), .d = dm, .hi = addr(hi_lo),
          .lo = addr(hi_lo + n * k), .sqr_sum = addr(sqr_sum.ptr()), .ends = addr(ends),
          .d_split = split_d ? d.stride(0) : 0, .splits = splits, .k_block = kKBlock};
}

// On the NPU target: the vector pass, then the hi and lo products as two K-grouped BF16 launches (one
// group per split, the ends read on the device) that add onto the zeroed D; no host sync.
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
  dev.launch("dga_npu_launch_hc_prenorm_vector", unsigned(dev.vector_cores()), &p, m * k + 2 * n * k + splits * m * n);
  TensorView ends_view = d;
  ends_view.data = ends, ends_view.offset = 0, ends_view.dtype = DType::kInt32, ends_view.ndim = 1;
  ends_view.shape[0] = splits, ends_view.strides[0] = 1;
  const TensorView d0 = slice(d, split_d ? 0 : -1);
  for (int64_t i = 0; i < 2; ++i) {
    const layout::MatrixRef bm{.base = ws + size_t(i) * part, .origin = 0, .rows = n, .cols = k, .row_stride = k,
                               .col_stride = 1, .bits = core::kBf16Bits};
    const kernel::KGroupedProblems<kernel::HostRows> problems{.a = api::matrix(a, 16, false), .b = bm,
                                                              .e = api::epilogue(d0, &d0),
                                                              .d_group = split_d ? d.stride(0) : 0,
                                                              .c_group = split_d ? d.stride(0) : 0, .groups = splits,
                                                              .align = kKBlock, .ends = {}};
    api::npu_k_grouped_gemm(problems, {}, ends_view, d, d);
  }
}

}  // namespace

void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          int64_t num_splits) {
  api::require_same_device({{"a", &a}, {"b", &b}, {"d", &d}, {"sqr_sum", &sqr_sum}});
  api::require_dtype(a, "a", {DType::kBF16});
  api::require_dtype(b, "b", {DType::kFP32});
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 2);
  DGA_REQUIRE(a.size(-1) <= 1 || a.stride(-1) == 1, kValue, "a", "must be K-major (stride(-1) == 1)");
  DGA_REQUIRE(b.size(-1) <= 1 || b.stride(-1) == 1, kValue, "b", "must be K-major (stride(-1) == 1)");
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[0];
  DGA_REQUIRE(b.shape[1] == k, kValue, "b", "K mismatch: a has K=", k, ", b ", b.shape_str());
  DGA_REQUIRE(n > 0 && n <= kMaxN && n % kNMultiple == 0, kValue, "b", "N must be a positive multiple of ",
              kNMultiple, " up to ", kMaxN, ", got ", n);
  DGA_REQUIRE(k > 0 && k % kKBlock == 0, kValue, "a", "K must be a positive multiple of ", kKBlock, ", got ", k);
  // As upstream, any number of splits: a split with no K block writes zeros to its D and sqr_sum.
  DGA_REQUIRE(num_splits >= 0, kValue, "num_splits", "must be a positive int or None, got ", num_splits);
  const int64_t splits = num_splits > 0 ? num_splits : 1;
  api::require_dtype(d, "d", {DType::kFP32});
  api::require_dtype(sqr_sum, "sqr_sum", {DType::kFP32});
  if (num_splits > 0) {
    api::require_shape(d, "d", {splits, m, n});
    api::require_shape(sqr_sum, "sqr_sum", {splits, m});
  } else {
    api::require_shape(d, "d", {m, n});
    api::require_shape(sqr_sum, "sqr_sum", {m});
  }
  DGA_REQUIRE(sqr_sum.is_contiguous(), kValue, "sqr_sum", "must be contiguous");
  for (int64_t s = 0; s < splits; ++s)
    api::validate_output(slice(d, num_splits > 0 ? s : -1), nullptr, m, n, {{"a", &a}, {"b", &b}, {"sqr_sum", &sqr_sum}});
  api::require_no_overlap(sqr_sum, "sqr_sum", a, "a");
  api::require_no_overlap(sqr_sum, "sqr_sum", d, "d");
  if (m == 0) return;

  if (api::on_npu_target(a)) return npu_hc_prenorm(a, b, d, sqr_sum, splits, num_splits > 0);
  api::require_host(a, "a");
  // The vector pass: hi, lo and the sums of squares, spread over the AI cores.
  std::vector<uint16_t> hi_lo(size_t(2 * n * k));
  const DgaHcPrenormParams vp = vector_params(a, b, d, sqr_sum, splits, num_splits > 0, hi_lo.data(), nullptr, false);
  auto& backend = runtime::host_backend();
  const int64_t steps = layout::imax(n, layout::ceil_div(m, tile::HostHcVector::HcPrenorm::kSqrRows) * splits);
  backend.launch("hc_prenorm_vector", int(std::min<int64_t>(steps, backend.num_ai_cores())),
                 [&](tile::Core& core) { kernel::hc_prenorm_vector<tile::HostHcVector>(core, vp); });
  // The hi and lo products of each split's K range (kernel::hc_split_range).
  const int64_t blocks = k / kKBlock;
  const layout::MatrixRef am = api::matrix(a, 16, false);
  for (int64_t part = 0; part < 2; ++part) {
    const layout::MatrixRef bm{.base = hi_lo.data() + part * n * k, .origin = 0, .rows = n, .cols = k, .row_stride = k,
                               .col_stride = 1, .bits = core::kBf16Bits};
    std::vector<kernel::GemmProblem> problems;
    for (int64_t s = 0; s < splits; ++s) {
      const TensorView ds = slice(d, num_splits > 0 ? s : -1);
      const kernel::HcKRange r = kernel::hc_split_range(blocks, splits, s);
      // The lo pass adds onto the hi pass.
      const int64_t k0 = r.first * kKBlock, ks = r.count * kKBlock;
      if (ks == 0) {  // a split with no K block: D = 0 (more splits than K blocks, as upstream allows)
        if (part == 0) zero_fp32(ds);
        continue;
      }
      problems.push_back(
          {am.block(0, k0, m, ks), bm.block(0, k0, n, ks), api::epilogue(ds, part == 1 ? &ds : nullptr)});
    }
    kernel::GemmArgs args{.problems = problems.data(), .num_problems = int64_t(problems.size()), .config = {}};
    api::launch_gemm("tf32_hc_prenorm_gemm", {.m = m, .n = n, .k = k / splits, .a_bits = core::kBf16Bits,
                                              .b_bits = core::kBf16Bits, .l0_bits = core::kBf16Bits, .d_bytes = 4,
                                              .with_accumulation = part == 1}, args);
  }
}

}  // namespace deepgemm_ascend
