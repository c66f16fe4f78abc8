// Problem source of compressed MQA logits (max_seqlen_k > 0): one problem per query i, its H query rows
// times the KV rows [ks[i], ke[i]) (clamped into [0, SKV], and to `width` rows), whose logits are columns
// [0, ke[i] - ks[i]) of row i of the [S, width] logits. ks and ke are read through `Ints` (a host pointer,
// or a GM tensor on the NPU) when the kernel runs, so the schedule needs no host sync. An empty range is
// an empty problem.
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

  // Query i's KV rows: the first and how many.
  struct Range {
    int64_t start = 0, rows = 0;
  };

  DGA_HOST_DEVICE int64_t count() const { return q.rows / heads; }

  DGA_HOST_DEVICE Range range(int64_t i) const {
    const int64_t s = layout::imin(layout::imax(int64_t(ks(i)), 0), kv.rows);
    const int64_t e = layout::imin(layout::imax(int64_t(ke(i)), s), kv.rows);
    return {s, layout::imin(e - s, width)};
  }

  DGA_HOST_DEVICE GemmProblem get(int64_t i) const {
    const Range r = range(i);
    GemmProblem p{q, kv, {}, scaling};
    p.a.origin += i * heads * q.row_stride, p.a.rows = heads;
    p.b.origin += r.start * kv.row_stride, p.b.rows = r.rows;
    if (scaling.enabled && scaling.a.base != nullptr) p.scaling.a = scaling.a.shifted(i * heads);
    if (scaling.enabled && scaling.b.base != nullptr) p.scaling.b = scaling.b.shifted(r.start);
    return p;
  }
};

}  // namespace deepgemm_ascend::kernel
