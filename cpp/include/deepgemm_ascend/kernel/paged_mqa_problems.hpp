// Problem source of the paged MQA-logits kernel: one problem per (request, KV page). Request b's
// next_n * H query rows multiply the KV rows of its page p (block block_table[b, p] of the cache) that
// fall before the logits' width. A page past every one of the request's context lengths, or whose block
// id is outside the cache, is an empty problem: it costs nothing, and its logits keep what the caller put
// there. context_lens and block_table are read through `Ints` (a host pointer, or a GM tensor on the NPU)
// when the kernel runs, so the schedule needs no host sync. One source for the host and the NPU target.
#pragma once

#include "deepgemm_ascend/kernel/gemm_problems.hpp"

namespace deepgemm_ascend::kernel {

// One page of one request; block < 0: nothing to compute.
struct MqaPage {
  int64_t request = 0, page = 0, block = -1;
  int64_t col0 = 0;  // the page's first logits column (page * block_kv)
  int64_t cols = 0;  // KV rows of the page before the logits' width (0 when block < 0)
};

template <class Ints>
struct PagedMqaProblems {
  layout::MatrixRef q;         // request 0's query rows [next_n * H, D]
  layout::MatrixRef kv;        // block 0's KV rows [block_kv, D]
  int64_t request_values = 0;  // q values from one request to the next
  int64_t block_values = 0;    // kv values from one cache block to the next
  int64_t batch = 0, next_n = 1, num_blocks = 0;
  int64_t pages = 0;           // pages per request: ceil(width / block_kv), at most the table's columns
  int64_t width = 0;           // logits columns (max_context_len)
  Ints lens;                   // context_lens[b * next_n + t]
  Ints table;                  // block_table[b * table_stride + p]
  int64_t table_stride = 0;
  block::Scaling scaling{};    // request 0's q scales and block 0's KV scales, if enabled (FP4: UE8M0)
  int64_t sfa_request_bytes = 0, sfb_block_bytes = 0;  // from one request's / block's scales to the next

  DGA_HOST_DEVICE int64_t count() const { return batch * pages; }

  DGA_HOST_DEVICE MqaPage page(int64_t i) const {
    MqaPage pg;
    pg.request = i / pages, pg.page = i % pages, pg.col0 = pg.page * kv.rows;
    int64_t longest = 0;
    for (int64_t t = 0; t < next_n; ++t) longest = layout::imax(longest, int64_t(lens(pg.request * next_n + t)));
    if (pg.col0 >= layout::imin(longest, width)) return pg;
    const int64_t block = int64_t(table(pg.request * table_stride + pg.page));
    if (block < 0 || block >= num_blocks) return pg;
    pg.block = block;
    pg.cols = layout::imin(kv.rows, width - pg.col0);
    return pg;
  }

  DGA_HOST_DEVICE GemmProblem get(int64_t i) const { return problem(page(i)); }

  DGA_HOST_DEVICE GemmProblem problem(const MqaPage& pg) const {
    GemmProblem p{q, kv, {}, scaling};
    const int64_t block = layout::imax(pg.block, 0);
    p.a.origin += pg.request * request_values;
    p.b.origin += block * block_values;
    if (scaling.enabled) {
      p.scaling.a = scaling.a.advanced(pg.request * sfa_request_bytes);
      p.scaling.b = scaling.b.advanced(block * sfb_block_bytes);
    }
    p.b.rows = pg.cols;
    return p;
  }
};

}  // namespace deepgemm_ascend::kernel
