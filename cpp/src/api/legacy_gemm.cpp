// Upstream's legacy K-grouped BF16 GEMMs (deep_gemm.legacy, "tn"): every group is one problem of the GEMM
// kernel whose gathered operand reads its K rows through the index table (MatrixRef::gather), in the
// kernel's GM -> L1 copy; nothing is gathered before the call.
#include <algorithm>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

// A contiguous int32 [n] tensor in host memory.
const int32_t* int32_vector(const TensorView& t, const char* arg, int64_t n) {
  api::require_dtype(t, arg, {DType::kInt32});
  DGA_REQUIRE(t.ndim == 1 && t.shape[0] == n && t.is_contiguous(), kValue, arg, "expected a contiguous [", n,
              "] tensor, got shape ", t.shape_str(), " strides ", t.strides_str());
  return t.as<const int32_t>();
}

struct KRange {
  int64_t start, end;
};

// Every group's K range [k_start[g], k_end[g]) within [0, k]; start >= end is an empty group.
std::vector<KRange> k_ranges(const TensorView& k_start, const TensorView& k_end, int64_t groups, int64_t k) {
  const int32_t* s = int32_vector(k_start, "k_start", groups);
  const int32_t* e = int32_vector(k_end, "k_end", groups);
  std::vector<KRange> out;
  for (int64_t g = 0; g < groups; ++g) {
    DGA_REQUIRE(s[g] >= 0 && s[g] <= k, kValue, "k_start", "group ", g, " starts at K = ", s[g], ", outside [0, ", k,
                "]");
    DGA_REQUIRE(e[g] <= k, kValue, "k_end", "group ", g, " ends at K = ", e[g], ", beyond K = ", k);
    out.push_back({s[g], std::max<int64_t>(e[g], s[g])});
  }
  return out;
}

}  // namespace

void legacy_k_grouped_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& k_indices,
                           const TensorView& k_start, const TensorView& k_end, bool acc, bool gather_a) {
  api::require_same_device(
      {{"a", &a}, {"b", &b}, {"d", &d}, {"k_indices", &k_indices}, {"k_start", &k_start}, {"k_end", &k_end}});
  DGA_REQUIRE(!api::on_npu_target(a), kNotImplemented, "a",
              "the legacy K-grouped (a_fused / b_fused) GEMMs have no NPU kernel yet");
  api::require_host(a, "a");
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 2);
  api::require_rank(d, "d", 3);
  api::require_dtype(a, "a", {DType::kBF16});
  api::require_dtype(b, "b", {DType::kBF16});
  const int64_t m = a.shape[1], n = b.shape[1], groups = d.shape[0];
  // K: the rows of the operand read in order; the gathered one's rows are indexed.
  const TensorView& plain = gather_a ? b : a;
  const int64_t k = plain.shape[0], gathered_rows = (gather_a ? a : b).shape[0];
  const int32_t* idx = int32_vector(k_indices, "k_indices", k);
  for (int64_t i = 0; i < k; ++i)
    DGA_REQUIRE(idx[i] >= -1 && idx[i] < gathered_rows, kValue, "k_indices", "position ", i, " gathers row ", idx[i],
                " of ", gather_a ? "a" : "b", ", which has ", gathered_rows, " rows (expected -1 or [0, ",
                gathered_rows, "))");
  const auto ranges = k_ranges(k_start, k_end, groups, k);
  for (int64_t g = 0; g < groups; ++g)
    api::validate_output(api::index_leading(d, g), nullptr, m, n,
                         {{"a", &a}, {"b", &b}, {"k_indices", &k_indices}, {"k_start", &k_start}, {"k_end", &k_end}});
  // A [*, M] and B [*, N] as their K-major transposes [M, K] / [N, K] (MN-major), the gathered one by K.
  layout::MatrixRef am = api::matrix(a, core::kBf16Bits, true), bm = api::matrix(b, core::kBf16Bits, true);
  layout::MatrixRef& g_ref = gather_a ? am : bm;
  g_ref.gather = idx, g_ref.gather_dim = 1, g_ref.cols = k;
  std::vector<kernel::GemmProblem> problems;
  for (int64_t g = 0; g < groups; ++g) {
    const TensorView dg = api::index_leading(d, g);
    const auto [k0, k1] = ranges[size_t(g)];
    if (k1 == k0) {  // no K: D[g] = 0, or unchanged when accumulating
      if (!acc) api::trivial_gemm({m, n, 0}, dg, nullptr);
      continue;
    }
    problems.push_back(
        {am.block(0, k0, m, k1 - k0), bm.block(0, k0, n, k1 - k0), api::epilogue(dg, acc ? &dg : nullptr)});
  }
  if (problems.empty() || m == 0 || n == 0) return;
  kernel::GemmArgs args{.problems = problems.data(),
                        .num_problems = int64_t(problems.size()),
                        .config = {},
                        .operands = {tile::OperandFormat::kBF16, tile::OperandFormat::kBF16},
                        .scaled = false};
  api::launch_gemm("legacy_k_grouped_gemm",
                   {.m = m,
                    .n = n,
                    .k = std::max<int64_t>(1, k / groups),
                    .d_bytes = int(core::itemsize(d.dtype)),
                    .with_accumulation = acc},
                   args);
}

}  // namespace deepgemm_ascend
