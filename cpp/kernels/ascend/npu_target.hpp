// The NPU target of the shared kernel templates (block/, kernel/): the host target's interface
// (tile/host_target.hpp) over the AscendC primitives, for operands of type Elem in GM and L1 and the
// cube of Arch. Part of the NPU primitive layer: it only maps the shared calls onto npu_primitives.hpp.
// NOT validated on hardware.
//
// Not on this target yet: FP32 block-scale promotion (it needs the vector cores; the launcher never
// passes a Promotion here) and MX operands (load_l1_to_l0_mx exists; the GEMM templates do not reach it).
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/fixpipe_dst.hpp"
#include "deepgemm_ascend/tile/operand.hpp"
#include "deepgemm_ascend/tile/promotion.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"
#include "npu_ring.hpp"

namespace deepgemm_ascend::tile::npu {

// A GM tensor of T starting `values` values (of value_bits<T>() bits) after `base`.
template <class T>
__aicore__ inline Gm<T> gm_tensor(const void* base, int64_t values) {
  Gm<T> g;
  const uint64_t elem = uint64_t(values) * value_bits<T>() / (8 * sizeof(T));
  g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(reinterpret_cast<uintptr_t>(base)) + elem);
  return g;
}
// A count of values as a count of T elements (packed fp4: two values per element).
template <class T>
__aicore__ inline uint32_t elems(int64_t values) { return uint32_t(uint64_t(values) * value_bits<T>() / (8 * sizeof(T))); }

template <class Elem, class ArchTag = arch::Ascend950>
struct Target {
  using Arch = ArchTag;
  using Ctx = npu::Ctx<Arch>;
  using Tile = npu::Tile;
  template <int N, Pipe Producer, Pipe Consumer, int Parts = 1>
  using Ring = npu::Ring<N, Producer, Consumer, Parts>;

  __aicore__ static inline int block_idx(const Ctx&) { return int(AscendC::GetBlockIdx()); }
  __aicore__ static inline int block_num(const Ctx&) { return int(AscendC::GetBlockNum()); }
  __aicore__ static inline Tile sub(const Tile& t, uint32_t offset, uint32_t bytes) {
    return {t.pos, t.offset + offset, bytes};
  }

  // K-major (ND) or MN-major (DN) GM tile -> Nz L1 tile of g.rows_pad rows.
  __aicore__ static inline void copy_gm_to_l1(Ctx& ctx, const Tile& dst, const layout::NzGeometry& g,
                                              const layout::MatrixRef& src) {
    const Local<Elem> l1 = ctx.template tensor<Elem>(dst);
    const Gm<Elem> gm = gm_tensor<Elem>(src.base, src.origin);
    const uint32_t rows = uint32_t(src.rows), cols = uint32_t(src.cols), l1_rows = uint32_t(g.rows_pad);
    if (src.col_stride == 1) copy_gm_to_l1_nd(l1, gm, rows, cols, elems<Elem>(src.row_stride), l1_rows);
    else copy_gm_to_l1_dn(l1, gm, rows, cols, elems<Elem>(src.col_stride), l1_rows);
  }
  __aicore__ static inline void load_l1_to_l0a(Ctx& ctx, const Tile& dst, const Tile& src,
                                               const layout::NzGeometry& src_g, int64_t rows, int64_t k_off,
                                               int64_t k, OperandFormat) {
    load_l1_to_l0(ctx.template tensor<Elem>(dst), ctx.template tensor<Elem>(src), uint32_t(src_g.rows_pad),
                  uint32_t(rows), uint32_t(k_off), uint32_t(k));
  }
  __aicore__ static inline void load_l1_to_l0b(Ctx& ctx, const Tile& dst, const Tile& src,
                                               const layout::NzGeometry& src_g, int64_t cols, int64_t k_off,
                                               int64_t k, OperandFormat) {
    load_l1_to_l0(ctx.template tensor<Elem>(dst), ctx.template tensor<Elem>(src), uint32_t(src_g.rows_pad),
                  uint32_t(cols), uint32_t(k_off), uint32_t(k));
  }
  __aicore__ static inline void mmad(Ctx& ctx, const Tile& c, const L0CGeometry&, const Tile& a, const Tile& b,
                                     int64_t rows, int64_t cols, int64_t k, bool init, const Promotion*) {
    npu::mmad(ctx.template tensor<float>(c), ctx.template tensor<Elem>(a), ctx.template tensor<Elem>(b),
              uint32_t(rows), uint32_t(cols), uint32_t(k), init);
  }
  // With a source C the launcher has made D equal to C first (upstream's in-place accumulation), so
  // the tile is added to D.
  __aicore__ static inline void fixpipe(Ctx& ctx, const FixpipeDst& dst, const Tile& c, const L0CGeometry& c_g) {
    const Local<float> l0c = ctx.template tensor<float>(c);
    const uint32_t m = uint32_t(dst.d.rows), n = uint32_t(dst.d.cols), m_pad = uint32_t(c_g.m_pad);
    const uint32_t ld = uint32_t(dst.d.row_stride);
    if (dst.dtype == core::DType::kFP32)
      fixpipe_to_gm(gm_tensor<float>(dst.d.base, dst.d.origin), l0c, m, n, m_pad, ld, dst.c != nullptr);
    else
      fixpipe_to_gm(gm_tensor<bfloat16_t>(dst.d.base, dst.d.origin), l0c, m, n, m_pad, ld, dst.c != nullptr);
  }
};

}  // namespace deepgemm_ascend::tile::npu
