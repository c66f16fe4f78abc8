// Lightning-indexer MQA logits over a paged KV cache: one problem per (request, page).
#include <cmath>
#include <deque>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "gemm_common.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

constexpr int64_t kBlockKvChoices[] = {32, 64};
constexpr int64_t kScaleBytes = 4;  // one float32 / packed-UE8M0 int32 per KV row

void fill_neg_inf(const TensorView& logits, int64_t row, int64_t from) {
  for (int64_t j = from; j < logits.shape[1]; ++j) {
    if (logits.dtype == DType::kFP32) logits.as<float>()[row * logits.strides[0] + j] = -INFINITY;
    else logits.as<uint16_t>()[row * logits.strides[0] + j] = core::float_to_bf16(-INFINITY);
  }
}

}  // namespace

void fp8_fp4_paged_mqa_logits(const TensorView& q, const TensorView* sfq, const TensorView& kv_cache,
                              const TensorView& weights, const TensorView& context_lens, const TensorView& block_table,
                              const TensorView& logits, bool clean, const TensorView* indices) {
  api::require_same_device({{"q", &q}, {"sfq", sfq}, {"kv_cache", &kv_cache}, {"weights", &weights},
                            {"context_lens", &context_lens}, {"block_table", &block_table}, {"logits", &logits},
                            {"indices", indices}});
  api::require_host(q, "q");
  const bool fp4 = sfq != nullptr;
  api::require_rank(q, "q", 4);
  DGA_REQUIRE(q.is_contiguous(), kValue, "q", "must be contiguous");
  api::require_dtype(q, "q", fp4 ? std::initializer_list<DType>{DType::kInt8, DType::kUInt8, DType::kFP4E2M1x2}
                                 : std::initializer_list<DType>{DType::kFP8E4M3});
  const int64_t batch = q.shape[0], next_n = q.shape[1], heads = q.shape[2], per = fp4 ? 2 : 1;
  const int64_t dim = q.shape[3] * per, row_bytes = q.shape[3];
  DGA_REQUIRE(next_n >= 1, kValue, "q", "next_n must be at least 1");
  if (fp4) {
    api::require_dtype(*sfq, "sfq", {DType::kInt32});
    api::require_shape(*sfq, "sfq", {batch, next_n, heads});
    DGA_REQUIRE(sfq->is_contiguous(), kValue, "sfq", "must be contiguous");
  }
  api::require_dtype(kv_cache, "kv_cache", {DType::kUInt8, DType::kInt8});
  api::require_rank(kv_cache, "kv_cache", 4);
  const int64_t num_blocks = kv_cache.shape[0], block_kv = kv_cache.shape[1];
  DGA_REQUIRE(block_kv == kBlockKvChoices[0] || block_kv == kBlockKvChoices[1], kValue, "kv_cache",
              "block_kv must be 32 or 64, got ", block_kv);
  DGA_REQUIRE(kv_cache.shape[2] == 1 && kv_cache.shape[3] == row_bytes + kScaleBytes, kValue, "kv_cache",
              "expected [num_blocks, block_kv, 1, ", row_bytes + kScaleBytes, "], got ", kv_cache.shape_str());
  DGA_REQUIRE(kv_cache.strides[3] == 1 && kv_cache.strides[1] == kv_cache.shape[3] &&
                  kv_cache.strides[0] % kScaleBytes == 0 && kv_cache.strides[0] >= block_kv * kv_cache.shape[3],
              kValue, "kv_cache", "needs strides (multiple of 4 and >= one block, ", kv_cache.shape[3], ", *, 1), got ",
              kv_cache.strides_str());
  api::require_dtype(weights, "weights", {DType::kFP32});
  api::require_shape(weights, "weights", {batch * next_n, heads});
  DGA_REQUIRE(weights.stride(-1) == 1, kValue, "weights", "needs a unit last stride");
  api::require_dtype(context_lens, "context_lens", {DType::kInt32});
  api::require_shape(context_lens, "context_lens", {batch, next_n});
  DGA_REQUIRE(context_lens.is_contiguous(), kValue, "context_lens", "must be contiguous");
  api::require_dtype(block_table, "block_table", {DType::kInt32});
  api::require_rank(block_table, "block_table", 2);
  DGA_REQUIRE(block_table.stride(-1) == 1 || block_table.shape[1] <= 1, kValue, "block_table", "needs a unit last stride");
  const bool varlen = indices != nullptr;
  if (varlen) {
    DGA_REQUIRE(next_n == 1, kValue, "indices", "varlen mode needs next_n == 1");
    api::require_dtype(*indices, "indices", {DType::kInt32});
    api::require_shape(*indices, "indices", {batch});
  }
  // Varlen mode has one row per token, and next_n is 1 there: one row per entry of q either way.
  DGA_REQUIRE(block_table.shape[0] == batch, kValue, "block_table", "expected ", batch, " rows, got ",
              block_table.shape_str());
  api::require_dtype(logits, "logits", {DType::kFP32, DType::kBF16});
  api::require_rank(logits, "logits", 2);
  DGA_REQUIRE(logits.shape[0] == batch * next_n, kValue, "logits", "expected ", batch * next_n, " rows, got ",
              logits.shape_str());
  api::require_row_major_output(logits, "logits");
  const int64_t width = logits.shape[1];
  const auto* lens = context_lens.as<const int32_t>();
  for (int64_t r = 0; r < batch * next_n; ++r)
    DGA_REQUIRE(lens[r] >= 0 && lens[r] <= width, kValue, "context_lens", "row ", r, " has length ", lens[r],
                ", outside [0, max_context_len = ", width, "]");
  for (const auto& [t, arg] : {std::pair{&q, "q"}, std::pair{&kv_cache, "kv_cache"}, std::pair{&weights, "weights"}})
    api::require_no_overlap(logits, "logits", *t, arg);

  // Problems: the rows of request b (all next_n tokens) against each page up to its longest length.
  std::deque<std::vector<int32_t>> ranges;  // stable storage for the per-problem [ks, ke) arrays
  std::vector<kernel::MqaProblem> problems;
  const auto* table = block_table.as<const int32_t>();
  const auto* base = kv_cache.as<const uint8_t>();
  const tile::OperandFormat fmt = fp4 ? tile::OperandFormat::kE2M1 : tile::OperandFormat::kE4M3;
  const int bits = tile::operand_bits(fmt);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t longest = 0;
    for (int64_t t = 0; t < next_n; ++t) longest = std::max<int64_t>(longest, lens[b * next_n + t]);
    const int64_t pages = layout::ceil_div(longest, block_kv);
    DGA_REQUIRE(pages <= block_table.shape[1], kValue, "block_table", "request ", b, " needs ", pages,
                " blocks but a row holds ", block_table.shape[1]);
    for (int64_t pg = 0; pg < pages; ++pg) {
      const int64_t id = table[b * block_table.strides[0] + pg];
      DGA_REQUIRE(id >= 0 && id < num_blocks, kValue, "block_table", "entry [", b, ", ", pg, "] = ", id,
                  " is outside [0, ", num_blocks, ")");
      const uint8_t* block = base + id * kv_cache.strides[0];
      std::vector<int32_t> ks(static_cast<size_t>(next_n), 0), ke(static_cast<size_t>(next_n));
      for (int64_t t = 0; t < next_n; ++t)
        ke[size_t(t)] = int32_t(std::clamp<int64_t>(lens[b * next_n + t] - pg * block_kv, 0, block_kv));
      ranges.push_back(std::move(ks));
      const int32_t* ks_p = ranges.back().data();
      ranges.push_back(std::move(ke));
      const int32_t* ke_p = ranges.back().data();
      const int64_t cols = std::min(block_kv, width - pg * block_kv);
      const void* scales = block + block_kv * row_bytes;
      kernel::MqaProblem pr{{q.data, (q.offset + b * next_n * heads * row_bytes) * per, next_n * heads, dim, dim, 1, bits},
                            {block, 0, cols, dim, dim, 1, bits},
                            {},
                            {weights.as<const float>() + b * next_n * weights.strides[0], weights.strides[0], ks_p,
                             ke_p, fp4 ? nullptr : static_cast<const float*>(scales),
                             static_cast<char*>(logits.ptr()) +
                                 (b * next_n * logits.strides[0] + pg * block_kv) * core::itemsize(logits.dtype),
                             logits.strides[0], logits.dtype, heads, cols, clean, false}};
      if (fp4) {
        const auto* sq = static_cast<const uint8_t*>(sfq->ptr()) + b * next_n * heads * kScaleBytes;
        pr.scaling = {true, api::ue8m0_rows(sq), api::ue8m0_rows(scales)};
      }
      problems.push_back(pr);
    }
    if (clean)
      for (int64_t t = 0; t < next_n; ++t) fill_neg_inf(logits, b * next_n + t, std::min(width, pages * block_kv));
  }
  api::launch_mqa(problems.data(), int64_t(problems.size()), fmt, next_n * heads, block_kv, dim, heads, logits.dtype);
}

}  // namespace deepgemm_ascend
