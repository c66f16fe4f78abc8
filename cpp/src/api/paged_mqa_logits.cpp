// Lightning-indexer MQA logits over a paged KV cache: one problem per (request, page).
#include <cmath>
#include <deque>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/kernel/paged_mqa_problems.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
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

// On the NPU target (FP8 or FP4): context_lens and block_table are read by the kernels (no host sync) and not
// validated on the host: a length is clamped to [0, max_context_len], a page past the table's columns or
// with a block id outside the cache is not read. The logits are summed in fp32 on the device (through the
// workspace for bf16 logits); every column at or past a row's length is -inf, with or without cleaning
// (upstream leaves them unspecified without).
void npu_paged_mqa(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                   const TensorView& context_lens, const TensorView& block_table, const TensorView& logits,
                   const TensorView* sfq) {
  const bool f32_out = logits.dtype == DType::kFP32, f32_w = weights.dtype == DType::kFP32;
  const int64_t rows = logits.shape[0], width = logits.shape[1], heads = weights.shape[1];
  const int64_t acc_n = f32_out ? 0 : rows * width, w_n = f32_w ? 0 : rows * heads;
  const TensorView ws = acc_n + w_n > 0 ? api::npu_fp32_workspace(logits, 1, acc_n + w_n) : logits;
  const TensorView acc = f32_out ? logits : api::fp32_rows(ws, 0, rows, width);
  const TensorView w32 = f32_w ? weights : api::fp32_rows(ws, acc_n, rows, heads);
  if (!f32_w) api::npu_convert_rows(weights, w32);
  api::npu_zero_rows(acc, &context_lens);
  api::npu_paged_mqa_logits({.q = &q, .kv_cache = &kv_cache, .weights = &w32, .context_lens = &context_lens,
                             .block_table = &block_table, .acc = &acc, .sfq = sfq});
  if (!f32_out) api::npu_convert_rows(acc, logits);
}

}  // namespace

void fp8_fp4_paged_mqa_logits(const TensorView& q, const TensorView* sfq, const TensorView& kv_cache,
                              const TensorView& weights, const TensorView& context_lens, const TensorView& block_table,
                              const TensorView& logits, bool clean, const TensorView* indices) {
  api::require_same_device({{"q", &q}, {"sfq", sfq}, {"kv_cache", &kv_cache}, {"weights", &weights},
                            {"context_lens", &context_lens}, {"block_table", &block_table}, {"logits", &logits},
                            {"indices", indices}});
  const bool npu = api::on_npu_target(q);
  if (!npu) api::require_host(q, "q");
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
  api::require_dtype(weights, "weights", {DType::kFP32, DType::kBF16});
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
  DGA_REQUIRE(weights.dtype == DType::kFP32 || logits.dtype == DType::kBF16, kType, "weights",
              "bfloat16 weights need bfloat16 logits");
  api::require_rank(logits, "logits", 2);
  DGA_REQUIRE(logits.shape[0] == batch * next_n, kValue, "logits", "expected ", batch * next_n, " rows, got ",
              logits.shape_str());
  api::require_row_major_output(logits, "logits");
  const int64_t width = logits.shape[1];
  for (const auto& [t, arg] : {std::pair{&q, "q"}, std::pair{&kv_cache, "kv_cache"}, std::pair{&weights, "weights"}})
    api::require_no_overlap(logits, "logits", *t, arg);
  if (npu) return npu_paged_mqa(q, kv_cache, weights, context_lens, block_table, logits, sfq);
  const auto* lens = context_lens.as<const int32_t>();
  for (int64_t r = 0; r < batch * next_n; ++r)
    DGA_REQUIRE(lens[r] >= 0 && lens[r] <= width, kValue, "context_lens", "row ", r, " has length ", lens[r],
                ", outside [0, max_context_len = ", width, "]");

  // Problems: the shared page walk (kernel/paged_mqa_problems.hpp) over what was validated above.
  const auto* table = block_table.as<const int32_t>();
  // bf16 weights are widened once ((B * next_n) x H values).
  std::vector<float> w32;
  const float* w = weights.as<const float>();
  int64_t w_stride = weights.stride(0);
  if (weights.dtype == DType::kBF16) {
    w32.resize(size_t(batch * next_n * heads));
    for (int64_t i = 0; i < batch * next_n; ++i)
      for (int64_t h = 0; h < heads; ++h)
        w32[size_t(i * heads + h)] = core::bf16_to_float(weights.as<const uint16_t>()[i * w_stride + h]);
    w = w32.data();
    w_stride = heads;
  }
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
    }
    if (clean)
      for (int64_t t = 0; t < next_n; ++t) fill_neg_inf(logits, b * next_n + t, std::min(width, pages * block_kv));
  }
  const kernel::PagedMqaProblems<kernel::HostRows> source{
      {q.data, q.offset * per, next_n * heads, dim, dim, 1, bits},
      {kv_cache.data, kv_cache.offset * per, block_kv, dim, dim, 1, bits},
      next_n * heads * dim,
      kv_cache.strides[0] * per,
      batch,
      next_n,
      num_blocks,
      std::min(layout::ceil_div(width, block_kv), block_table.shape[1]),
      width,
      {lens},
      {table},
      block_table.strides[0]};
  std::deque<std::vector<int32_t>> ranges;  // stable storage for the per-problem [ks, ke) arrays
  std::vector<kernel::MqaProblem> problems;
  for (int64_t i = 0; i < source.count(); ++i) {
    const kernel::MqaPage pg = source.page(i);
    if (pg.block < 0) continue;
    const kernel::GemmProblem gp = source.problem(pg);
    const int64_t b = pg.request;
    const uint8_t* block = kv_cache.as<const uint8_t>() + pg.block * kv_cache.strides[0];
    ranges.emplace_back(size_t(next_n), 0);
    const int32_t* ks_p = ranges.back().data();
    ranges.emplace_back(size_t(next_n));
    for (int64_t t = 0; t < next_n; ++t)
      ranges.back()[size_t(t)] = int32_t(std::clamp<int64_t>(lens[b * next_n + t] - pg.col0, 0, block_kv));
    const int32_t* ke_p = ranges.back().data();
    const void* scales = block + block_kv * row_bytes;
    kernel::MqaProblem pr{gp.a,
                          gp.b,
                          {},
                          {.weights = w + b * next_n * w_stride, .w_stride = w_stride, .ks = ks_p, .ke = ke_p,
                           .kv_scale = fp4 ? nullptr : static_cast<const float*>(scales),
                           .logits = static_cast<char*>(logits.ptr()) +
                                     (b * next_n * logits.strides[0] + pg.col0) * core::itemsize(logits.dtype),
                           .logits_stride = logits.strides[0], .logits_dtype = logits.dtype, .heads = heads,
                           .skv = pg.cols, .clean = clean, .compressed = false}};
    if (fp4) {
      const auto* sq = static_cast<const uint8_t*>(sfq->ptr()) + b * next_n * heads * kScaleBytes;
      pr.scaling = {true, api::ue8m0_rows(sq), api::ue8m0_rows(scales)};
    }
    problems.push_back(pr);
  }
  api::launch_mqa(problems.data(), int64_t(problems.size()), fmt, next_n * heads, block_kv, dim, heads, logits.dtype);
}

}  // namespace deepgemm_ascend
