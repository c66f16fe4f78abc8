// HyperConnection pre-norm GEMM. The bf16 cube reads TF32 exactly as two bf16 terms: for b32 =
// tf32(b), hi = bf16(b32) keeps its top 8 significant bits and lo = b32 - hi (at most 3 more bits) is
// exact in bf16, so a @ b32^T = a @ hi^T + a @ lo^T with every product exact and fp32 accumulation.
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "gemm_common.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

constexpr int64_t kKBlock = 64;   // K granularity of the splits
constexpr int64_t kMaxN = 128;
constexpr int64_t kNMultiple = 8;
constexpr int64_t kRowsPerBlock = 64;  // sqr_sum rows per host block

TensorView slice(const TensorView& t, int64_t s) {  // [S, ...][s], or t itself when unsplit
  return s < 0 ? t : api::index_leading(t, s);
}

}  // namespace

void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          int64_t num_splits) {
  api::require_same_device({{"a", &a}, {"b", &b}, {"d", &d}, {"sqr_sum", &sqr_sum}});
  api::require_host(a, "a");
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
  DGA_REQUIRE(num_splits >= 0 && num_splits <= k / kKBlock, kValue, "num_splits", "must be in [1, K / ", kKBlock,
              "] or None, got ", num_splits);
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

  // b = hi + lo exactly after TF32 rounding.
  std::vector<uint16_t> hi(size_t(n * k)), lo(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      const float t = core::round_to_tf32(b.as<const float>()[r * b.strides[0] + c]);
      const uint16_t h = core::float_to_bf16(t);
      hi[size_t(r * k + c)] = h;
      lo[size_t(r * k + c)] = core::float_to_bf16(t - core::bf16_to_float(h));
    }
  // Split s covers K blocks [first, first + count), the first (blocks % splits) splits one block more.
  const int64_t blocks = k / kKBlock;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t s = 0, first = 0; s < splits; ++s) {
    const int64_t count = blocks / splits + (s < blocks % splits ? 1 : 0);
    ranges.push_back({first * kKBlock, count * kKBlock});
    first += count;
  }
  const layout::MatrixRef am = api::matrix(a, 16, false);
  for (const auto* part : {&hi, &lo}) {
    const layout::MatrixRef bm{part->data(), 0, n, k, k, 1, 16};
    std::vector<kernel::GemmProblem> problems;
    for (int64_t s = 0; s < splits; ++s) {
      const TensorView ds = slice(d, num_splits > 0 ? s : -1);
      const auto [k0, ks] = ranges[size_t(s)];
      // The lo pass adds onto the hi pass.
      problems.push_back({am.block(0, k0, m, ks), bm.block(0, k0, n, ks), api::epilogue(ds, part == &lo ? &ds : nullptr)});
    }
    kernel::GemmArgs args{problems.data(), int64_t(problems.size()), {}};
    api::launch_gemm("tf32_hc_prenorm_gemm", {m, n, k / splits, 16, 16, 16, 4, part == &lo}, args);
  }
  // Row sums of squares per split, rows spread over the AI cores.
  auto& backend = runtime::host_backend();
  const int64_t row_blocks = layout::ceil_div(m, kRowsPerBlock);
  backend.launch("hc_sqr_sum", int(std::min<int64_t>(row_blocks, backend.num_ai_cores())), [&](tile::Core& core) {
    for (int64_t rb = core.block_idx(); rb < row_blocks; rb += core.block_num())
      for (int64_t r = rb * kRowsPerBlock; r < std::min(m, (rb + 1) * kRowsPerBlock); ++r)
        for (int64_t s = 0; s < splits; ++s) {
          const auto [k0, ks] = ranges[size_t(s)];
          const uint16_t* row = a.as<const uint16_t>() + r * a.strides[0] + k0;
          float acc = 0.0f;
          for (int64_t c = 0; c < ks; ++c) {
            const float v = core::bf16_to_float(row[c]);
            acc += v * v;
          }
          sqr_sum.as<float>()[s * m + r] = acc;
        }
  });
}

}  // namespace deepgemm_ascend
