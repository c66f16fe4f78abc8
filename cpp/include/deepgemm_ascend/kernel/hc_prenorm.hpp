// The vector pass of the HyperConnection pre-norm GEMM (tf32_hc_prenorm_gemm), one source for the host
// and the Ascend 950's vector cores. The bf16 cube multiplies fp32 B as two bf16 terms, hi = bf16(b) and
// lo = bf16(b - hi) (b - hi is exact in fp32), so that a @ b^T ~ a @ hi^T + a @ lo^T carries 16
// significant bits of b, more than TF32's 11. This pass writes hi and lo, the sums of squares of A's
// rows over each split's K range, and, for the cube's accumulating K-grouped launches on the NPU, a
// zeroed D and the splits' K end offsets. Steps are spread over the cores round-robin; the target does
// each step's element work (VT::HcPrenorm: split, sqr_sums, zero_d, set_end / store_ends). On the NPU the pass
// runs in the cube's mix launch, its sums of squares beside the cube's products (hc_prenorm_beside_gemm).
#pragma once

#include "deepgemm_ascend/core/macros.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"

namespace deepgemm_ascend::kernel {

// Split s of `splits` covers K blocks [first, first + count): the first blocks % splits splits one block
// more; with more splits than blocks the last splits are empty (their D and sums of squares are 0).
struct HcKRange {
  int64_t first = 0, count = 0;
};
DGA_HOST_DEVICE HcKRange hc_split_range(int64_t blocks, int64_t splits, int64_t s) {
  const int64_t base = blocks / splits, extra = blocks % splits;
  return {s * base + layout::imin(s, extra), base + (s < extra ? 1 : 0)};
}

// Sums of squares: a block of rows over one split's K range per step, the steps round-robin over `cores`.
template <class Op>
DGA_DEVICE void hc_sqr_sums(Op& op, const DgaHcPrenormParams& p, int64_t core, int64_t cores) {
  const int64_t rows = op.sqr_rows(), row_blocks = layout::ceil_div(p.a.rows, rows), blocks = p.a.cols / p.k_block;
  for (int64_t u = core; u < row_blocks * p.splits; u += cores) {
    const int64_t r0 = (u / p.splits) * rows, s = u % p.splits;
    const HcKRange kr = hc_split_range(blocks, p.splits, s);
    op.sqr_sums(s, r0, layout::imin(rows, p.a.rows - r0), kr.first * p.k_block, kr.count * p.k_block);
  }
}

// The pass's steps of core `core` of `cores`: hi and lo, the sums of squares (`sqr`, when p.sqr_sum is set),
// D zeroed and the splits' K ends.
template <class Op>
DGA_DEVICE void hc_prenorm_steps(Op& op, const DgaHcPrenormParams& p, int64_t core, int64_t cores, bool sqr) {
  // B -> hi + lo: one row's chunk per step.
  const int64_t chunk = op.chunk(), b_chunks = layout::ceil_div(p.b.cols, chunk);
  for (int64_t u = core; u < p.b.rows * b_chunks; u += cores) {
    const int64_t r = u / b_chunks, c0 = (u % b_chunks) * chunk;
    op.split(r, c0, layout::imin(chunk, p.b.cols - c0));
  }
  if (sqr && p.sqr_sum != 0) hc_sqr_sums(op, p, core, cores);
  // D = 0: a block of one split's rows per step.
  if (p.d.addr != 0) {
    const int64_t zrows = op.zero_rows(), zblocks = layout::ceil_div(p.d.rows, zrows);
    for (int64_t u = core; u < zblocks * p.splits; u += cores) {
      const int64_t r0 = (u / p.splits) * zrows;
      op.zero_d(u % p.splits, r0, layout::imin(zrows, p.d.rows - r0));
    }
  }
  if (p.ends != 0 && core == 0) {
    for (int64_t s = 0; s < p.splits; ++s) {
      const HcKRange kr = hc_split_range(p.a.cols / p.k_block, p.splits, s);
      op.set_end(s, (kr.first + kr.count) * p.k_block);
    }
    op.store_ends();
  }
}

template <class VT>
DGA_DEVICE void hc_prenorm_vector(typename VT::Ctx& ctx, const DgaHcPrenormParams& p) {
  typename VT::HcPrenorm op(ctx, p);
  hc_prenorm_steps(op, p, VT::core_idx(ctx), VT::core_num(ctx), true);
}

// The pass in the cube's K-grouped GEMM's mix launch (VT's vector cores): its steps but the sums of squares
// spread over every vector core of every group; VT::pass_done (every vector core's writes done, then each
// group's cube core told) lets the cube cores read hi, lo, D and the ends; then the sums of squares, at the
// time the cube cores read the same rows of A, so that A comes from HBM about once and from L2 for the other
// reader.
template <class VT>
DGA_DEVICE void hc_prenorm_beside_gemm(typename VT::Ctx& ctx, const DgaHcPrenormParams& p) {
  typename VT::HcPrenorm op(ctx, p);
  const int64_t subs = VT::sub_num(ctx);
  const int64_t core = VT::group_idx(ctx) * subs + VT::sub_idx(ctx), cores = VT::group_num(ctx) * subs;
  hc_prenorm_steps(op, p, core, cores, false);
  VT::pass_done(ctx);
  if (p.sqr_sum != 0) hc_sqr_sums(op, p, core, cores);
}

}  // namespace deepgemm_ascend::kernel
