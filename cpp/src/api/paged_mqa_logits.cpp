// Lightning-indexer MQA logits over a paged KV cache: validate, dispatch to the host or the NPU, which run
// one kernel (kernel/mqa_logits.hpp) over one problem per (request, page) (kernel/mqa_segments.hpp).
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/kernel/mqa_segments.hpp"
#include "gemm_common.hpp"
#include "mqa_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

constexpr int64_t kBlockKvChoices[] = {32, 64};
constexpr int64_t kScaleBytes = 4;  // one float32 / packed-UE8M0 int32 per KV row

// The arguments of one call.
struct PagedCall {
  const TensorView &q, *sfq, &kv_cache, &weights, &context_lens, &block_table, &logits;
  bool clean;
  const TensorView* indices;
};

// The validated sizes: B requests of next_n queries of H heads and D values (row_bytes stored), a cache
// of num_blocks pages of block_kv rows, logits `width` columns wide; where the call runs.
struct PagedShape {
  int64_t batch, next_n, heads, dim, row_bytes, num_blocks, block_kv, width;
  bool fp4, npu;
};

// q fp8 [B, next_n, H, D] / packed fp4 [B, next_n, H, D / 2] with sfq int32 [B, next_n, H].
PagedShape validate_query(const PagedCall& m) {
  const bool npu = api::on_npu_target(m.q), fp4 = m.sfq != nullptr;
  if (!npu) api::require_host(m.q, "q");
  api::require_rank(m.q, "q", 4);
  DGA_REQUIRE(m.q.is_contiguous(), kValue, "q", "must be contiguous");
  api::require_dtype(m.q, "q",
                     fp4 ? std::initializer_list<DType>{DType::kInt8, DType::kUInt8, DType::kFP4E2M1x2}
                         : std::initializer_list<DType>{DType::kFP8E4M3});
  PagedShape sh{.batch = m.q.shape[0],
                .next_n = m.q.shape[1],
                .heads = m.q.shape[2],
                .dim = m.q.shape[3] * (fp4 ? 2 : 1),
                .row_bytes = m.q.shape[3],
                .num_blocks = 0,
                .block_kv = 0,
                .width = 0,
                .fp4 = fp4,
                .npu = npu};
  DGA_REQUIRE(sh.next_n >= 1, kValue, "q", "next_n must be at least 1");
  api::require_mqa_heads(sh.heads, sh.dim, fp4);
  if (fp4) {
    api::require_dtype(*m.sfq, "sfq", {DType::kInt32});
    api::require_shape(*m.sfq, "sfq", {sh.batch, sh.next_n, sh.heads});
    DGA_REQUIRE(m.sfq->is_contiguous(), kValue, "sfq", "must be contiguous");
  }
  return sh;
}

// kv_cache uint8 [num_blocks, block_kv, 1, row_bytes + 4], rows then scales in each page.
void validate_cache(const PagedCall& m, PagedShape& sh) {
  const TensorView& kv = m.kv_cache;
  api::require_dtype(kv, "kv_cache", {DType::kUInt8, DType::kInt8});
  api::require_rank(kv, "kv_cache", 4);
  sh.num_blocks = kv.shape[0], sh.block_kv = kv.shape[1];
  DGA_REQUIRE(sh.block_kv == kBlockKvChoices[0] || sh.block_kv == kBlockKvChoices[1], kValue, "kv_cache",
              "block_kv must be 32 or 64, got ", sh.block_kv);
  DGA_REQUIRE(kv.shape[2] == 1 && kv.shape[3] == sh.row_bytes + kScaleBytes, kValue, "kv_cache",
              "expected [num_blocks, block_kv, 1, ", sh.row_bytes + kScaleBytes, "], got ", kv.shape_str());
  DGA_REQUIRE(kv.strides[3] == 1 && kv.strides[1] == kv.shape[3] && kv.strides[0] % kScaleBytes == 0 &&
                  kv.strides[0] >= sh.block_kv * kv.shape[3],
              kValue, "kv_cache", "needs strides (multiple of 4 and >= one block, ", kv.shape[3], ", *, 1), got ",
              kv.strides_str());
}

// weights [B * next_n, H], context_lens int32 [B, next_n], block_table int32 [B, pages], indices int32 [B].
void validate_tables(const PagedCall& m, const PagedShape& sh) {
  api::require_mqa_weights(m.weights, sh.batch * sh.next_n, sh.heads);
  api::require_dtype(m.context_lens, "context_lens", {DType::kInt32});
  api::require_shape(m.context_lens, "context_lens", {sh.batch, sh.next_n});
  DGA_REQUIRE(m.context_lens.is_contiguous(), kValue, "context_lens", "must be contiguous");
  api::require_dtype(m.block_table, "block_table", {DType::kInt32});
  api::require_rank(m.block_table, "block_table", 2);
  DGA_REQUIRE(m.block_table.stride(-1) == 1 || m.block_table.shape[1] <= 1, kValue, "block_table",
              "needs a unit last stride");
  if (m.indices != nullptr) {
    DGA_REQUIRE(sh.next_n == 1, kValue, "indices", "varlen mode needs next_n == 1");
    api::require_dtype(*m.indices, "indices", {DType::kInt32});
    api::require_shape(*m.indices, "indices", {sh.batch});
  }
  // Varlen mode has one row per token, and next_n is 1 there: one row per entry of q either way.
  DGA_REQUIRE(m.block_table.shape[0] == sh.batch, kValue, "block_table", "expected ", sh.batch, " rows, got ",
              m.block_table.shape_str());
}

// Pages of request b: enough for its longest row.
int64_t request_pages(const PagedCall& m, const PagedShape& sh, int64_t b) {
  const auto* lens = m.context_lens.as<const int32_t>();
  int64_t longest = 0;
  for (int64_t t = 0; t < sh.next_n; ++t) longest = std::max<int64_t>(longest, lens[b * sh.next_n + t]);
  return layout::ceil_div(longest, sh.block_kv);
}

// Host: the lengths within [0, width] and every page a request reads in the table and the cache. On the
// NPU target context_lens and block_table are read by the kernels (no host sync) and not validated on the
// host: a length is clamped to [0, max_context_len], a page past the table's columns or with a block id
// outside the cache is not read.
void validate_pages(const PagedCall& m, const PagedShape& sh) {
  if (sh.npu) return;
  const auto* lens = m.context_lens.as<const int32_t>();
  for (int64_t r = 0; r < sh.batch * sh.next_n; ++r)
    DGA_REQUIRE(lens[r] >= 0 && lens[r] <= sh.width, kValue, "context_lens", "row ", r, " has length ", lens[r],
                ", outside [0, max_context_len = ", sh.width, "]");
  const auto* table = m.block_table.as<const int32_t>();
  for (int64_t b = 0; b < sh.batch; ++b) {
    const int64_t pages = request_pages(m, sh, b);
    DGA_REQUIRE(pages <= m.block_table.shape[1], kValue, "block_table", "request ", b, " needs ", pages,
                " blocks but a row holds ", m.block_table.shape[1]);
    for (int64_t pg = 0; pg < pages; ++pg) {
      const int64_t id = table[b * m.block_table.strides[0] + pg];
      DGA_REQUIRE(id >= 0 && id < sh.num_blocks, kValue, "block_table", "entry [", b, ", ", pg, "] = ", id,
                  " is outside [0, ", sh.num_blocks, ")");
    }
  }
}

PagedShape validate(const PagedCall& m) {
  api::require_same_device({{"q", &m.q},
                            {"sfq", m.sfq},
                            {"kv_cache", &m.kv_cache},
                            {"weights", &m.weights},
                            {"context_lens", &m.context_lens},
                            {"block_table", &m.block_table},
                            {"logits", &m.logits},
                            {"indices", m.indices}});
  PagedShape sh = validate_query(m);
  validate_cache(m, sh);
  validate_tables(m, sh);
  api::require_mqa_logits(m.logits, m.weights);
  DGA_REQUIRE(m.logits.shape[0] == sh.batch * sh.next_n, kValue, "logits", "expected ", sh.batch * sh.next_n,
              " rows, got ", m.logits.shape_str());
  api::require_row_major_output(m.logits, "logits");
  sh.width = m.logits.shape[1];
  api::require_mqa_no_overlap(m.logits, m.q, m.kv_cache, "kv_cache", m.weights);
  validate_pages(m, sh);
  return sh;
}

// The pages of the shared page walk (kernel/paged_mqa_problems.hpp) over the host's tensors.
kernel::PagedMqaProblems<kernel::HostRows> page_walk(const PagedCall& m, const PagedShape& sh) {
  const int64_t per = sh.fp4 ? 2 : 1;
  kernel::PagedMqaProblems<kernel::HostRows> w{
      .q = api::mqa_rows(m.q, sh.next_n * sh.heads, sh.dim, sh.fp4),
      .kv = api::mqa_rows(m.kv_cache, sh.block_kv, sh.dim, sh.fp4),
      .request_values = sh.next_n * sh.heads * sh.dim,
      .block_values = m.kv_cache.strides[0] * per,
      .batch = sh.batch,
      .next_n = sh.next_n,
      .num_blocks = sh.num_blocks,
      .pages = std::min(layout::ceil_div(sh.width, sh.block_kv), m.block_table.shape[1]),
      .width = sh.width,
      .lens = {m.context_lens.as<const int32_t>()},
      .table = {m.block_table.as<const int32_t>()},
      .table_stride = m.block_table.strides[0]};
  if (sh.fp4) {  // a request's q scales follow the request before; a block's row scales follow its rows
    const auto* block0 = m.kv_cache.as<const uint8_t>();
    w.scaling = {.enabled = true,
                 .a = api::ue8m0_rows(m.sfq->ptr()),
                 .b = api::ue8m0_rows(block0 + sh.block_kv * sh.row_bytes)};
    w.sfa_request_bytes = sh.next_n * sh.heads * kScaleBytes, w.sfb_block_bytes = m.kv_cache.strides[0];
  }
  return w;
}

// Host: the same kernel and problems as the NPU's (kernel/mqa_logits.hpp, kernel/mqa_segments.hpp), the
// logits prepared as there.
void dispatch_host(const PagedCall& m, const PagedShape& sh) {
  const auto* lens = m.context_lens.as<const int32_t>();
  api::HostLogitsWork work = api::host_logits_work(m.logits, m.weights);
  api::host_zero_rows(work, lens);
  const kernel::GemmArgs args =
      api::host_mqa_args(api::mqa_format(sh.fp4), sh.next_n * sh.heads, sh.block_kv, sh.dim, sh.heads);
  DgaPagedMqaParams p{};
  p.mqa = api::host_mqa_params(work, sh.heads, 0);
  p.context_lens = api::addr(lens);
  api::launch_mqa(p.mqa, args, kernel::PagedMqaSegments<kernel::HostRows>{page_walk(m, sh), &p, sh.fp4 ? 4 : 8});
  api::host_finish_logits(work, m.logits);
}

// NPU target (FP8 or FP4): every column at or past a row's length is -inf, with or without cleaning
// (upstream leaves them unspecified without).
void dispatch_npu(const PagedCall& m) {
  const api::NpuLogitsWork work = api::npu_logits_work(m.logits, m.weights);
  api::npu_zero_rows(work.acc, &m.context_lens);
  api::npu_paged_mqa_logits({.q = &m.q,
                             .kv_cache = &m.kv_cache,
                             .weights = &work.weights,
                             .context_lens = &m.context_lens,
                             .block_table = &m.block_table,
                             .acc = &work.acc,
                             .sfq = m.sfq});
  api::npu_finish_logits(work, m.logits);
}

}  // namespace

void fp8_fp4_paged_mqa_logits(const TensorView& q, const TensorView* sfq, const TensorView& kv_cache,
                              const TensorView& weights, const TensorView& context_lens, const TensorView& block_table,
                              const TensorView& logits, bool clean, const TensorView* indices) {
  const PagedCall m{.q = q,
                    .sfq = sfq,
                    .kv_cache = kv_cache,
                    .weights = weights,
                    .context_lens = context_lens,
                    .block_table = block_table,
                    .logits = logits,
                    .clean = clean,
                    .indices = indices};
  const PagedShape sh = validate(m);
  if (sh.npu) return dispatch_npu(m);
  dispatch_host(m, sh);
}

}  // namespace deepgemm_ascend
