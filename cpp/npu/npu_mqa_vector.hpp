// The vector-core target of the MQA-logits mix kernel's vector side (kernel/mqa_promotion.hpp): each
// tile's (query, head) rows of scores arrive in the UB from the cube (npu_promotion.hpp's slots); per
// query, the core sums relu(score) * weight over the heads it holds, scales by the KV rows' scales, sets
// the columns outside [ks, ke) to -inf, and adds the row to the fp32 logits in GM (atomic add: the other
// vector core of the group adds the other heads). Part of the NPU primitive layer; NOT validated on
// hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "npu_ctx.hpp"
#include "npu_promotion.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

// Where one problem's logits go, in device memory: its first query's weights row and logits element
// (column col0: the logits column of the problem's KV row 0), the queries' [ks, ke) (int32, one per
// query; ks 0: every range starts at column 0) in logits columns, and its KV rows' fp32 scales.
struct MqaSegment {
  uint64_t weights, ks, ke, kv_scale, logits;
  int64_t col0;
};

namespace mqa {

// acc[j] (= or +=) w * relu(x[j]) for j < n.
template <class Arch>
__simd_vf__ inline void accumulate(__ubuf__ float* acc, __ubuf__ float* x, float w, uint32_t n, uint32_t first) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<float> a, v;
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign(v, x + i * kL);
    R::Relu(v, v, m);
    if (first != 0) {
      R::Muls(a, v, w, m);
    } else {
      R::LoadAlign(a, acc + i * kL);
      R::Axpy(a, v, w, m);
    }
    R::StoreAlign(acc + i * kL, a, m);
  }
}

// out[j] = acc[j] * scale[j] (acc[j] without scales: scaled 0) for columns n0 + j in [ks, ke), -inf
// elsewhere, j < n.
template <class Arch>
__simd_vf__ inline void finish(__ubuf__ float* out, __ubuf__ float* acc, __ubuf__ float* scale, uint32_t scaled,
                               uint32_t n, int32_t n0, int32_t ks, int32_t ke) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<float> a, s, ninf;
  R::RegTensor<int32_t> col;
  R::MaskReg ge, lt, valid, all = R::CreateMask<float>();
  R::Duplicate(ninf, -__builtin_huge_valf(), all);
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign(a, acc + i * kL);
    if (scaled != 0) {
      R::LoadAlign(s, scale + i * kL);
      R::Mul(a, a, s, m);
    }
    R::Arange(col, n0 + int32_t(i * kL));
    R::Compares<int32_t, AscendC::CMPMODE::GE>(ge, col, ks, m);
    R::Compares<int32_t, AscendC::CMPMODE::LT>(lt, col, ke, m);
    R::MaskAnd(valid, ge, lt, m);
    R::Select(a, a, ninf, valid);
    R::StoreAlign(out + i * kL, a, m);
  }
}

}  // namespace mqa

template <class ArchTag = arch::Ascend950>
struct MqaVecTarget {
  using Arch = ArchTag;
  using Ctx = VecCtx<Arch>;

  __aicore__ static inline int64_t group_idx(const Ctx&) { return AscendC::GetBlockIdx() / AscendC::GetSubBlockNum(); }
  __aicore__ static inline int64_t group_num(const Ctx&) { return AscendC::GetBlockNum(); }
  __aicore__ static inline int64_t sub_idx(const Ctx&) { return AscendC::GetSubBlockIdx(); }

  class MqaEpilogue {
    using ScaleRing = Ring<1, Pipe::kMTE2, Pipe::kV>;
    using OutRing = Ring<2, Pipe::kV, Pipe::kMTE3>;

   public:
    // The promotion slots first: the cube's Fixpipe writes them at the UB's start.
    __aicore__ inline MqaEpilogue(Ctx& ctx, int64_t block_m, int64_t block_n, const DgaMqaParams& p)
        : ctx_(ctx), p_(p), ub_(block_m, block_n), slots_(ctx.alloc(Pos::kUB, ub_.bytes())), rx_(ub_),
          row_bytes_(uint32_t(block_n) * uint32_t(sizeof(float))), acc_(ctx.alloc(Pos::kUB, row_bytes_)),
          scale_(ctx, {{Pos::kUB, row_bytes_}}, "mqa kv scales"), out_(ctx, {{Pos::kUB, row_bytes_}}, "mqa logits") {}

    // Rows [row0, row0 + rows) of the scores ((query, head) pairs of problem `seg`) x its KV columns
    // [n0, n0 + cols).
    __aicore__ inline void tile(const MqaSegment& seg, int64_t row0, int64_t rows, int64_t n0, int64_t cols) {
      const uint32_t part = slots_.offset + rx_.receive();
      if (rows > 0) {
        seg_ = seg;
        const Tile s = scale_.acquire();
        if (seg.kv_scale != 0)  // FP8: the KV rows' fp32 scales (FP4: applied by the cube)
          AscendC::DataCopyPad(ctx_.template tensor<float>(s),
                               gm_at<float>(seg.kv_scale + uint64_t(n0) * sizeof(float)),
                               AscendC::DataCopyExtParams(1, uint32_t(cols) * uint32_t(sizeof(float)), 0, 0, 0),
                               AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        scale_.commit();
        const Tile sc = scale_.consume();
        for (int64_t q = row0 / p_.heads; q * p_.heads < row0 + rows; ++q) query(q, row0, rows, n0, cols, part, sc);
        scale_.release();
      }
      rx_.release();
    }

   private:
    __aicore__ inline void query(int64_t q, int64_t row0, int64_t rows, int64_t n0, int64_t cols, uint32_t part,
                                 const Tile& sc) {
      const int64_t h0 = layout::imax(row0, q * p_.heads), h1 = layout::imin(row0 + rows, (q + 1) * p_.heads);
      const Gm<float> w = gm_at<float>(seg_.weights + uint64_t(q * p_.w_stride) * sizeof(float));
      for (int64_t r = h0; r < h1; ++r) {
        const uint32_t at = part + uint32_t(r - row0) * ub_.row_values * uint32_t(sizeof(float));
        mqa::accumulate<Arch>(ub<float>(acc_.offset), ub<float>(at), w.GetValue(uint64_t(r - q * p_.heads)),
                              uint32_t(cols), r == h0 ? 1 : 0);
      }
      const int32_t ks = seg_.ks != 0 ? gm_at<int32_t>(seg_.ks).GetValue(uint64_t(q)) : 0;
      const int32_t ke = gm_at<int32_t>(seg_.ke).GetValue(uint64_t(q));
      const Tile o = out_.acquire();
      mqa::finish<Arch>(ub<float>(o.offset), ub<float>(acc_.offset), ub<float>(sc.offset), seg_.kv_scale != 0 ? 1u : 0u,
                        uint32_t(cols), int32_t(seg_.col0 + n0), ks, ke);
      out_.commit();
      const Tile st = out_.consume();
      AscendC::SetAtomicAdd<float>();
      AscendC::DataCopyPad(gm_at<float>(seg_.logits + uint64_t(q * p_.logits_stride + n0) * sizeof(float)),
                           ctx_.template tensor<float>(st),
                           AscendC::DataCopyExtParams(1, uint32_t(cols) * uint32_t(sizeof(float)), 0, 0, 0));
      AscendC::SetAtomicNone();
      out_.release();
    }

    template <class T>
    __aicore__ inline __ubuf__ T* ub(uint32_t byte_offset) {
      return reinterpret_cast<__ubuf__ T*>(ctx_.template tensor<T>(Tile{Pos::kUB, byte_offset, 0}).GetPhyAddr());
    }

    Ctx& ctx_;
    DgaMqaParams p_;
    MqaSegment seg_{};
    PromotionUb ub_;
    Tile slots_;
    PromotionReceiver rx_;
    uint32_t row_bytes_;
    Tile acc_;
    ScaleRing scale_;
    OutRing out_;
  };
};

}  // namespace deepgemm_ascend::tile::npu
