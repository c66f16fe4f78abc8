// The NPU target of the shared kernel templates (block/, kernel/): the host target's interface
// (host/host_target.hpp) over the AscendC primitives, for operands of type Elem in GM and L1 and the
// cube of Arch. Part of the NPU primitive layer: it only maps the shared calls onto npu_primitives.hpp.
// NOT validated on hardware.
//
// How a target instance treats scaled operands:
//   kMx        Elem is an MX operand (fp8 or packed fp4 with UE8M0 scales per 32 K values): its scales
//              move with it (kMxScales) and the L0 tiles have the MX types, so the Mmad is the MX one;
//   kPromoted  FP32 block scales: every K block's product goes to the vector cores of the group
//              (npu_promotion.hpp), which scale and accumulate it and store D (kernel/gemm_promotion.hpp);
//   kMxHandOff MX operands as kMx, and the tile's whole product goes to the vector cores of the group
//              once, after its last K step (an epilogue on the vector cores: the MQA logits' reduction).
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/kernel/tiling.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/layout/scale_ref.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/fixpipe_dst.hpp"
#include "deepgemm_ascend/tile/operand.hpp"
#include "deepgemm_ascend/tile/promotion.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"
#include "npu_promotion.hpp"
#include "npu_ring.hpp"
#include "npu_unit_flags.hpp"

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

// The L0 type of an operand: for MX fp8 the tag types that select the MX Mmad (§5).
template <class Elem, bool Mx>
struct L0Type { using type = Elem; };
template <>
struct L0Type<fp8_e4m3fn_t, true> { using type = AscendC::mx_fp8_e4m3_t; };
template <>
struct L0Type<fp8_e5m2_t, true> { using type = AscendC::mx_fp8_e5m2_t; };

enum class Scales : uint8_t { kNone, kMx, kPromoted, kMxHandOff };

// L1Stages: the GEMM's L1 ring (kernel::kL1Stages; more where a tile is one short K step, so that the
// loads of several tiles are in flight at once). L0CStages: the GEMM's L0C ring; two only where each tile
// is one product (one K block: the promoted and hand-off products go to the vector cores once per tile),
// as the send no longer waits for the Fixpipe before the next Mmad.
template <class Elem, Scales S = Scales::kNone, class ArchTag = arch::Ascend950, int L1Stages = kernel::kL1Stages,
          int L0CStages = 1>
struct Target {
  using Arch = ArchTag;
  static constexpr int kL1Stages = L1Stages, kL0CStages = L0CStages;
  static constexpr bool kMxHandOff = S == Scales::kMxHandOff;
  static constexpr bool kMxScales = S == Scales::kMx || kMxHandOff;
  static constexpr bool kPromoted = S == Scales::kPromoted;
  static constexpr bool kToVector = kPromoted || kMxHandOff;  // products go to the vector cores, not to GM
  // A GEMM whose tiles go to GM from one L0C stage orders L0C by its unit flags (npu_unit_flags.hpp).
  static constexpr bool kUnitFlag = !kToVector && L0CStages == 1;
  using Ctx = typename AscendC::Conditional<
      kToVector, PromotedCtx<Arch>,
      typename AscendC::Conditional<kUnitFlag, UnitFlagCtx<Arch>, npu::Ctx<Arch>>::type>::type;
  using Tile = npu::Tile;
  using L0 = typename L0Type<Elem, kMxScales>::type;
  __aicore__ static constexpr int l0_bits(OperandFormat) { return int(value_bits<Elem>()); }
  template <int N, Pipe Producer, Pipe Consumer, int Parts = 1>
  using EventRing = npu::Ring<N, Producer, Consumer, Parts>;
  template <int N, Pipe Producer, Pipe Consumer, int Parts = 1>
  using Ring = typename AscendC::Conditional<kUnitFlag && Producer == Pipe::kM && Consumer == Pipe::kFIX,
                                             npu::UnitFlagRing<Parts>, EventRing<N, Producer, Consumer, Parts>>::type;

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
    // The DMA counts elements of Elem (packed fp4: bytes, two K values each; ISA DataCopy ND2NZ: "b4 data
    // moves as b8, parameters set for b8"); packed fp4 reaches it K-major only (the launcher checks).
    const uint32_t rows = uint32_t(src.rows), l1_rows = uint32_t(g.rows_pad);
    if (src.col_stride == 1) copy_gm_to_l1_nd(l1, gm, rows, elems<Elem>(src.cols), elems<Elem>(src.row_stride), l1_rows);
    else copy_gm_to_l1_dn(l1, gm, rows, uint32_t(src.cols), elems<Elem>(src.col_stride), l1_rows);
  }
  // B's tile: Nz like A's (L1's Nz of [N, K] is what LoadData makes Zn of); the host target uses its own format.
  __aicore__ static inline void copy_gm_to_l1b(Ctx& ctx, const Tile& dst, const layout::NzGeometry& g,
                                               const layout::MatrixRef& src) {
    copy_gm_to_l1(ctx, dst, g, src);
  }
  __aicore__ static inline void load_l1_to_l0a(Ctx& ctx, const Tile& dst, const Tile& src,
                                               const layout::NzGeometry& src_g, int64_t rows, int64_t k_off,
                                               int64_t k, OperandFormat, const Promotion* /*fold: host only*/) {
    load_l1_to_l0(ctx.template tensor<L0>(dst), ctx.template tensor<Elem>(src), uint32_t(src_g.rows_pad),
                  uint32_t(rows), uint32_t(k_off), uint32_t(k));
  }
  __aicore__ static inline void load_l1_to_l0b(Ctx& ctx, const Tile& dst, const Tile& src,
                                               const layout::NzGeometry& src_g, int64_t cols, int64_t k_off,
                                               int64_t k, OperandFormat, const Promotion* /*fold: host only*/) {
    load_l1_to_l0(ctx.template tensor<L0>(dst), ctx.template tensor<Elem>(src), uint32_t(src_g.rows_pad),
                  uint32_t(cols), uint32_t(k_off), uint32_t(k));
  }
  // MX: the UE8M0 scale pairs of `rows` rows and `pairs` pairs along K (GM: int16 pairs, one of the two
  // strides 2 bytes) into the L1 scale tile whose 16-row blocks hold l1_pairs 32 B units each. MN-major
  // pairs are an ND copy of the [pairs, rows] matrix, K-major pairs a DN copy (§5).
  __aicore__ static inline void copy_scales_gm_to_l1(Ctx& ctx, const Tile& dst, int64_t l1_pairs,
                                                     const layout::ScaleRef& s, int64_t rows, int64_t pairs) {
    constexpr int64_t kPairBytes = arch::MxFormat::kMxScalesPerPack;
    const Local<half> l1 = ctx.template tensor<half>(dst);
    const Gm<half> gm = gm_tensor<half>(s.base, 0);
    if (s.mn_stride == kPairBytes)
      copy_gm_to_l1_nd(l1, gm, uint32_t(pairs), uint32_t(rows), uint64_t(s.k_stride / kPairBytes), uint32_t(l1_pairs));
    else
      copy_gm_to_l1_dn(l1, gm, uint32_t(pairs), uint32_t(rows), uint64_t(s.mn_stride / kPairBytes), uint32_t(l1_pairs));
  }
  // MX: columns [k_off, k_off + k) of the L1 operand tile and their scales into an L0 tile (L0A or L0B:
  // the hardware puts the scales in L0A_MX / L0B_MX at the tile's address / 16).
  __aicore__ static inline void load_l1_to_l0_mx(Ctx& ctx, const Tile& dst, const Tile& src,
                                                 const layout::NzGeometry& src_g, const Tile& scales,
                                                 int64_t l1_pairs, int64_t rows, int64_t k_off, int64_t k) {
    npu::load_l1_to_l0_mx<Elem, L0>(ctx.template tensor<L0>(dst), ctx.template tensor<Elem>(src),
                                    ctx.template tensor<fp8_e8m0_t>(scales), uint32_t(src_g.rows_pad),
                                    uint32_t(l1_pairs * arch::MxFormat::kMxBaseK), uint32_t(rows), uint32_t(k_off),
                                    uint32_t(k));
  }
  // Promoted: every K block starts a fresh product (in the sender's L0C tile for it), which goes to the
  // vector cores. MX hand-off: the product accumulates over the tile's K steps and goes to the vector cores
  // after the last (promo). last: the tile's last Mmad (its unit flags then mark the blocks written).
  __aicore__ static inline void mmad(Ctx& ctx, const Tile& c, const L0CGeometry& c_g, const Tile& a, const Tile& b,
                                     int64_t rows, int64_t cols, int64_t k, bool init, const Promotion* promo,
                                     bool last = false) {
    Local<float> l0c = ctx.template tensor<float>(c);
    if constexpr (kPromoted) {
      if (promo != nullptr) l0c = ctx.sender().product(l0c);
    }
    uint8_t unit = kUnitOff;
    if constexpr (kUnitFlag) unit = ctx.mmad_flag(rows, init, last);
    npu::mmad(l0c, ctx.template tensor<L0>(a), ctx.template tensor<L0>(b), uint32_t(rows), uint32_t(cols), uint32_t(k),
              init || (kPromoted && promo != nullptr), unit);
    if constexpr (kToVector) {
      if (promo != nullptr)
        ctx.sender().send(ctx.template tensor<float>(Tile{Pos::kUB, 0, 0}), l0c, uint32_t(rows), uint32_t(c_g.m_pad),
                          kL0CStages == 1);
    }
  }
  // With a source C the launcher has made D equal to C first (upstream's in-place accumulation), so
  // the tile is added to D.
  // Promoted / MX hand-off: the vector cores store the tile.
  __aicore__ static inline void fixpipe(Ctx& ctx, const FixpipeDst& dst, const Tile& c, const L0CGeometry& c_g) {
    if constexpr (kToVector) return;
    const Local<float> l0c = ctx.template tensor<float>(c);
    const uint32_t m = uint32_t(dst.d.rows), n = uint32_t(dst.d.cols), m_pad = uint32_t(c_g.m_pad);
    const uint32_t ld = uint32_t(dst.d.row_stride);
    uint8_t unit = kUnitOff;
    if constexpr (kUnitFlag) unit = ctx.fixpipe_flag(m);
    if (dst.dtype == core::DType::kFP32)
      fixpipe_to_gm(gm_tensor<float>(dst.d.base, dst.d.origin), l0c, m, n, m_pad, ld, dst.c != nullptr, unit);
    else
      fixpipe_to_gm(gm_tensor<bfloat16_t>(dst.d.base, dst.d.origin), l0c, m, n, m_pad, ld, dst.c != nullptr, unit);
    if constexpr (kUnitFlag) ctx.after_fixpipe(m);
  }
};

}  // namespace deepgemm_ascend::tile::npu
