// Problem source of MQA logits over each query's own KV rows: one problem per `queries` consecutive
// queries (compressed mode: one), their H query rows each times the KV rows of the union of their ranges
// [ks[i], ke[i]) (clamped into [0, SKV], and to `width` rows). Compressed mode (max_seqlen_k > 0): query i's
// logits are columns [0, ke[i] - ks[i]) of row i of the [S, width] logits; normal mode: each KV row at its
// own column. ks and ke are read through `Ints` (a host pointer, or a GM tensor on the NPU) when the kernel
// runs, so the schedule needs no host sync. An empty range is an empty problem.
#pragma once

#include "deepgemm_ascend/kernel/gemm_problems.hpp"

namespace deepgemm_ascend::kernel {

template <class Ints>
struct CompressedMqaProblems {
  layout::MatrixRef q;       // [S * H, D]: query i's heads are rows [i * H, (i + 1) * H)
  layout::MatrixRef kv;      // [SKV, D]
  int64_t heads = 1, width = 0;
  Ints ks, ke;               // int32 [S]
  block::Scaling scaling{};  // q's and kv's scale rows (one per row), if enabled and present (FP4: UE8M0)
  int64_t queries = 1;       // per problem

  // A problem's KV rows: the first and how many.
  struct Range {
    int64_t start = 0, rows = 0;
  };

  DGA_HOST_DEVICE int64_t count() const { return layout::ceil_div(q.rows / heads, queries); }
  // Problem i's first query and number of queries.
  DGA_HOST_DEVICE int64_t first(int64_t i) const { return i * queries; }
  DGA_HOST_DEVICE int64_t size(int64_t i) const { return layout::imin(queries, q.rows / heads - i * queries); }

  // The union of problem i's queries' ranges (an empty range adds nothing).
  DGA_HOST_DEVICE Range range(int64_t i) const {
    int64_t lo = kv.rows, hi = 0;
    for (int64_t j = first(i); j < first(i) + size(i); ++j) {
      const int64_t s = layout::imin(layout::imax(int64_t(ks(j)), 0), kv.rows);
      const int64_t e = layout::imin(layout::imax(int64_t(ke(j)), s), kv.rows);
      if (e > s) lo = layout::imin(lo, s), hi = layout::imax(hi, e);
    }
    return hi > lo ? Range{lo, layout::imin(hi - lo, width)} : Range{};
  }

  // The first KV row of a problem get() returned (its range's start, without reading ks / ke again).
  DGA_HOST_DEVICE int64_t start(const GemmProblem& p) const { return (p.b.origin - kv.origin) / kv.row_stride; }

  DGA_HOST_DEVICE GemmProblem get(int64_t i) const {
    const Range r = range(i);
    GemmProblem p{q, kv, {}, scaling};
    p.a.origin += first(i) * heads * q.row_stride, p.a.rows = size(i) * heads;
    p.b.origin += r.start * kv.row_stride, p.b.rows = r.rows;
    if (scaling.enabled && scaling.a.base != nullptr) p.scaling.a = scaling.a.shifted(first(i) * heads);
    if (scaling.enabled && scaling.b.base != nullptr) p.scaling.b = scaling.b.shifted(r.start);
    return p;
  }
};

}  // namespace deepgemm_ascend::kernel
