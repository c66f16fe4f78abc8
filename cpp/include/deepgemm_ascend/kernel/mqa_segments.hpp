// Where the MQA-logits kernel's problems put their logits, one source for the host and the Ascend 950:
// each problem source (one problem over all of q x kv; one per query or per tile of queries over their
// ranges, kernel/compressed_mqa_problems.hpp; one per request page, kernel/paged_mqa_problems.hpp) pairs
// problem i with its segment: the addresses of its first query's weights row, [ks, ke) and logits element,
// its KV rows' scales and the KV row its column 0 stands for. Addresses are plain integers (device memory on
// the NPU, host memory on the host); logits and weights are fp32, ks / ke int32.
#pragma once

#include "deepgemm_ascend/kernel/compressed_mqa_problems.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/kernel/paged_mqa_problems.hpp"

namespace deepgemm_ascend::kernel {

// One problem's logits: its first query's weights row and logits element (column col0: the logits column
// of the problem's KV row 0), the queries' [ks, ke) (int32, one per query; ks 0: every range starts at
// column 0) in logits columns, and its KV rows' fp32 scales (0: none, the cube applied them).
struct MqaSegment {
  uint64_t weights, ks, ke, kv_scale, logits;
  int64_t col0;
};

// Byte address of element `i` of `bits`-bit values from `addr`.
DGA_HOST_DEVICE uint64_t mqa_at(uint64_t addr, int64_t i, int64_t bits) { return addr + uint64_t(i * bits / 8); }

// One problem (contiguous KV): q x kv^T of the launch, its logits at their addresses.
struct DenseMqaSegments {
  GemmProblem problem;
  const DgaMqaParams* p;
  DGA_HOST_DEVICE int64_t count() const { return 1; }
  DGA_HOST_DEVICE GemmProblem get(int64_t) const { return problem; }
  DGA_HOST_DEVICE MqaSegment segment(int64_t, const GemmProblem&) const {
    return {p->weights, p->ks, p->ke, p->kv_scale, p->logits, 0};
  }
};

// One problem per query (compressed mode) or per tile of queries (normal mode) over the KV rows of their
// ranges, so that no tile lies outside every range of its queries: compressed mode, query i's logits row
// starting at column 0 with its first KV row; normal mode (`normal`), each KV row at its own column (the
// columns outside [ks, ke) are set to -inf before the launch). col0 is the problem's first KV row, so the
// [ks, ke) test holds for every column computed; ks / ke are read from the problem's first query on.
template <class Ints>
struct QueryMqaSegments {
  CompressedMqaProblems<Ints> src;
  const DgaMqaParams* p;
  bool normal = false;
  DGA_HOST_DEVICE int64_t count() const { return src.count(); }
  DGA_HOST_DEVICE GemmProblem get(int64_t i) const { return src.get(i); }
  DGA_HOST_DEVICE MqaSegment segment(int64_t i, const GemmProblem& pr) const {
    const int64_t q0 = src.first(i), start = src.start(pr);
    return {mqa_at(p->weights, q0 * p->w_stride, 32), mqa_at(p->ks, q0, 32), mqa_at(p->ke, q0, 32),
            p->kv_scale != 0 ? mqa_at(p->kv_scale, start, 32) : 0,
            mqa_at(p->logits, q0 * p->logits_stride + (normal ? start : 0), 32), start};
  }
};

// Normal mode takes one problem per tile of queries when a tile holds whole queries (block_m a multiple of
// heads) and the ranges are given; otherwise one problem, whose tiles set -inf outside the ranges.
DGA_HOST_DEVICE bool mqa_one_problem(const DgaMqaParams& p, int64_t block_m) {
  return p.compressed == 0 && (p.ks == 0 || block_m % p.heads != 0);
}

// The problem source of the tiles of queries (normal mode: block_m / heads queries a problem over the union
// of their ranges) or of the queries (compressed mode), over the launch's q x kv `g`.
template <class Ints>
DGA_HOST_DEVICE QueryMqaSegments<Ints> query_mqa_segments(const DgaMqaParams& p, const GemmProblem& g,
                                                          int64_t block_m, Ints ks, Ints ke) {
  const bool normal = p.compressed == 0;
  return {{g.a, g.b, p.heads, normal ? g.b.rows : p.compressed, ks, ke, g.scaling, normal ? block_m / p.heads : 1},
          &p,
          normal};
}

// One problem per (request, KV page) over context_lens and block_table; a page's logits start at its
// request's first row and the page's first column; every row's range is [0, context_len).
template <class Ints>
struct PagedMqaSegments {
  PagedMqaProblems<Ints> src;
  const DgaPagedMqaParams* p;
  int64_t bits;  // of a value of q and KV
  DGA_HOST_DEVICE int64_t count() const { return src.count(); }
  DGA_HOST_DEVICE GemmProblem get(int64_t i) const { return src.get(i); }
  DGA_HOST_DEVICE MqaSegment segment(int64_t i, const GemmProblem& pr) const {
    const int64_t request = i / src.pages, col0 = (i % src.pages) * src.kv.rows, rows = request * src.next_n;
    const uint64_t block = mqa_at(uint64_t(reinterpret_cast<uintptr_t>(pr.b.base)), pr.b.origin, bits);
    // FP8: the block's fp32 scales follow its rows (FP4: the cube applies the UE8M0 ones; none here).
    const uint64_t scales = bits == 8 ? mqa_at(block, src.kv.rows * src.kv.row_stride, bits) : 0;
    return {mqa_at(p->mqa.weights, rows * p->mqa.w_stride, 32), 0, mqa_at(p->context_lens, rows, 32), scales,
            mqa_at(p->mqa.logits, rows * p->mqa.logits_stride + col0, 32), col0};
  }
};

}  // namespace deepgemm_ascend::kernel
