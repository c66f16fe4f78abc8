// Problem sources of the GEMM kernel: count() problems, get(p) the p-th (by value). A source decides
// where a problem's sizes come from; the kernel only walks their tiles, so sizes that live in device
// memory (masked_m) are read when the kernel runs, with no host sync.
#pragma once

#include "deepgemm_ascend/block/block_mmad.hpp"
#include "deepgemm_ascend/block/epilogue.hpp"
#include "deepgemm_ascend/core/macros.hpp"

namespace deepgemm_ascend::kernel {

struct GemmProblem {
  layout::MatrixRef a;
  layout::MatrixRef b;
  block::EpilogueArgs epilogue;
  block::Scaling scaling{};
  // A second B of b's shape (unscaled problems with block::Operands::second_b; base null: none): the tile is
  // A @ B^T + A @ B2^T, both accumulated in L0C from one copy of each K step of A (the HC pre-norm's hi and
  // lo terms).
  layout::MatrixRef b2{};
};

// Problems built before the launch.
struct ProblemArray {
  const GemmProblem* problems = nullptr;
  int64_t n = 0;
  DGA_HOST_DEVICE int64_t count() const { return n; }
  DGA_HOST_DEVICE GemmProblem get(int64_t p) const { return problems[p]; }
};

// M-grouped masked GEMM: group g multiplies the first rows(g) rows of A[g] by B[g] into the same rows of
// D[g]; rows(g) is clamped to [0, M]. `Rows` reads masked_m: a host pointer, or a GM tensor on the NPU.
template <class Rows>
struct MaskedProblems {
  layout::MatrixRef a;       // group 0: [M, K]
  layout::MatrixRef b;       // group 0: [N, K]
  block::EpilogueArgs e;     // group 0: D [M, N]
  int64_t a_group = 0, b_group = 0, d_group = 0;  // values from one group to the next
  int64_t groups = 0;
  Rows rows;
  block::Scaling scaling{};                       // group 0's scales, if enabled
  int64_t sfa_group = 0, sfb_group = 0;           // bytes from one group's scales to the next
  const uint8_t* group_fold = nullptr;            // host: per group, whether its scales fold (null: scaling.fold)

  DGA_HOST_DEVICE int64_t count() const { return groups; }
  DGA_HOST_DEVICE GemmProblem get(int64_t g) const {
    const int64_t r = layout::imin(layout::imax(int64_t(rows(g)), 0), a.rows);
    GemmProblem p{shift(a, g * a_group).block(0, 0, r, a.cols), shift(b, g * b_group), e, scaling};
    p.epilogue.d.origin += g * d_group;
    p.epilogue.d.rows = r;
    p.scaling.a = scaling.a.advanced(g * sfa_group);
    p.scaling.b = scaling.b.advanced(g * sfb_group);
    if (group_fold != nullptr) p.scaling.fold = group_fold[g] != 0;
    return p;
  }

 private:
  DGA_HOST_DEVICE static layout::MatrixRef shift(layout::MatrixRef m, int64_t values) {
    m.origin += values;
    return m;
  }
};

// Rows [r0, r0 + rows) of A and D times group g of B (a chunk of an M-grouped contiguous GEMM).
DGA_HOST_DEVICE GemmProblem chunk_problem(const layout::MatrixRef& a, const layout::MatrixRef& b,
                                                 const block::EpilogueArgs& e, const block::Scaling& scaling,
                                                 int64_t r0, int64_t rows, int64_t g, int64_t b_group,
                                                 int64_t sfb_group) {
  GemmProblem p{a.block(r0, 0, rows, a.cols), b, e, scaling};
  p.b.origin += g * b_group;
  p.epilogue.d = e.d.block(r0, 0, rows, e.d.cols);
  if (scaling.enabled) {
    p.scaling.a = scaling.a.shifted(r0);
    p.scaling.b = scaling.b.advanced(g * sfb_group);
  }
  return p;
}

// The rows of an M-grouped contiguous GEMM are cut into windows of `run` rows (a multiple of `align`; 0:
// `align`), and each window into runs of consecutive aligned chunks of one group: one problem per run, listed
// at the index of its first chunk (the indices of its other chunks are empty problems). So a tile may span
// several chunks of a group (planned from the whole problem, not from the alignment) and never two groups.
DGA_HOST_DEVICE int64_t run_window(int64_t run, int64_t align) { return run > align ? run / align * align : align; }
// The end of the window holding row r0 (at most `rows`).
DGA_HOST_DEVICE int64_t window_end(int64_t r0, int64_t window, int64_t rows) {
  return layout::imin((r0 / window + 1) * window, rows);
}

// M-grouped contiguous GEMM with per-row group ids (-1: padding; every group starts at a multiple of
// `align`): a run multiplies its rows (the group's padding rows too, as upstream computes whole aligned
// chunks) by B[ids(first row)] into D; a chunk whose first id is outside [0, groups) is empty. `Ids` reads
// grouped_layout: a host pointer, or a GM tensor on the NPU (a run reads the id of each of its chunks).
template <class Ids>
struct ContiguousProblems {
  layout::MatrixRef a;       // [M, K]
  layout::MatrixRef b;       // group 0: [N, K]
  block::EpilogueArgs e;     // D [M, N]
  int64_t b_group = 0;       // values from one group of B to the next
  int64_t groups = 0;
  int64_t align = 1;
  Ids ids;
  block::Scaling scaling{};  // A's scales by row of A, group 0's scales of B, if enabled
  int64_t sfb_group = 0;     // bytes from one group's B scales to the next
  int64_t run = 0;           // rows of a window (run_window)

  DGA_HOST_DEVICE int64_t count() const { return layout::ceil_div(a.rows, align); }
  DGA_HOST_DEVICE GemmProblem get(int64_t c) const {
    const int64_t r0 = c * align, window = run_window(run, align);
    const int64_t g = int64_t(ids(r0));
    const bool valid = g >= 0 && g < groups;
    const bool first = r0 % window == 0 || int64_t(ids(r0 - align)) != g;
    if (!valid || !first) return chunk_problem(a, b, e, scaling, r0, 0, 0, b_group, sfb_group);
    const int64_t w_end = window_end(r0, window, a.rows);
    int64_t end = layout::imin(r0 + align, a.rows);
    while (end < w_end && int64_t(ids(end)) == g) end = layout::imin(end + align, a.rows);
    return chunk_problem(a, b, e, scaling, r0, end - r0, g, b_group, sfb_group);
  }
};

// M-grouped contiguous GEMM with the psum layout: `ends` reads the G end offsets (non-decreasing); group
// g owns rows [align_up(end(g - 1), align), end(g)). Runs as ContiguousProblems'; a chunk's group is found by
// binary search over the ends, and a chunk of no group (a gap) is empty.
template <class Ends>
struct PsumProblems {
  layout::MatrixRef a;       // [M, K]
  layout::MatrixRef b;       // group 0: [N, K]
  block::EpilogueArgs e;     // D [M, N]
  int64_t b_group = 0;
  int64_t groups = 0;
  int64_t align = 1;
  Ends ends;
  block::Scaling scaling{};  // as ContiguousProblems
  int64_t sfb_group = 0;
  int64_t run = 0;           // rows of a window (run_window)

  DGA_HOST_DEVICE int64_t count() const { return layout::ceil_div(a.rows, align); }
  DGA_HOST_DEVICE GemmProblem get(int64_t c) const {
    const int64_t r0 = c * align, window = run_window(run, align);
    int64_t lo = 0, hi = groups;  // the first group whose end lies beyond r0, else groups
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (int64_t(ends(mid)) > r0) hi = mid;
      else lo = mid + 1;
    }
    const int64_t g = lo;
    const int64_t start = g == 0 || g >= groups ? 0 : layout::align_up(int64_t(ends(g - 1)), align);
    const bool owned = g < groups && start <= r0 && (r0 % window == 0 || r0 == start);
    const int64_t w_end = window_end(r0, window, a.rows);
    const int64_t rows = owned ? layout::imin(int64_t(ends(g)), w_end) - r0 : 0;
    return chunk_problem(a, b, e, scaling, r0, layout::imax(rows, 0), owned ? g : 0, b_group, sfb_group);
  }
};

// K-grouped GEMM (MoE weight gradients): group g multiplies the K range [start(g), end(g)) of A and B,
// D[g] = C[g] + A_g @ B_g^T, with end(g) = ends(g) and start(g) = align_up(end(g - 1), align) (sizes that
// are multiples of `align` make the ranges adjacent); an empty range is an empty problem (D[g] keeps
// C[g]). `Ends` reads the end offsets: a host pointer, or a GM tensor on the NPU. Scales, if enabled, are
// indexed by global K (the group's K blocks start at start(g) / gran_k). Ends outside [0, sum K] are
// clamped to it.
template <class Ends>
struct KGroupedProblems {
  layout::MatrixRef a;    // [M, sum K]
  layout::MatrixRef b;    // [N, sum K]
  block::EpilogueArgs e;  // group 0: D [M, N] (and C, accumulated into)
  int64_t d_group = 0, c_group = 0;  // values from one group of D / C to the next
  int64_t groups = 0;
  int64_t align = 1;
  Ends ends;
  block::Scaling scaling{};
  layout::MatrixRef b2{};  // [N, sum K] (GemmProblem::b2), split along K as B; base null: none

  DGA_HOST_DEVICE int64_t count() const { return groups; }
  DGA_HOST_DEVICE GemmProblem get(int64_t g) const {
    // Clamped to [0, sum K]: ends in device memory are not checked on the host, and any values keep the
    // K range inside A and B.
    const int64_t start =
        g == 0 ? 0 : layout::imin(layout::imax(layout::align_up(int64_t(ends(g - 1)), align), int64_t(0)), a.cols);
    const int64_t kg = layout::imax(layout::imin(int64_t(ends(g)), a.cols) - start, 0);
    const int64_t rows = kg > 0 ? a.rows : 0;  // no K: no tiles
    GemmProblem p{a.block(0, start, rows, kg), b.block(0, start, b.rows, kg), e, scaling};
    if (b2.base != nullptr) p.b2 = b2.block(0, start, b2.rows, kg);
    p.epilogue.d.origin += g * d_group;
    p.epilogue.c.origin += g * c_group;
    if (scaling.enabled) {
      p.scaling.a = scaling.a.shifted(0, start / scaling.a.gran_k);
      p.scaling.b = scaling.b.shifted(0, start / scaling.b.gran_k);
    }
    return p;
  }
};

// masked_m / grouped_layout in host memory.
struct HostRows {
  const int32_t* p = nullptr;
  int32_t operator()(int64_t i) const { return p[i]; }
};

}  // namespace deepgemm_ascend::kernel
