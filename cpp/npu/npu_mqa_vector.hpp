// The vector-core target of the MQA-logits mix kernel's vector side (kernel/mqa_logits.hpp): each
// tile's (query, head) rows of scores arrive in the UB from the cube (npu_promotion.hpp's slots); per
// query, the core sums relu(score) * weight over the heads it holds, scales by the KV rows' scales, sets
// the columns outside [ks, ke) to -inf, and adds the row to the fp32 logits in GM (atomic add: the other
// vector core of the group adds the other heads). Part of the NPU primitive layer; NOT validated on
// hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/kernel/mqa_logits.hpp"
#include "deepgemm_ascend/kernel/mqa_segments.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "npu_ctx.hpp"
#include "npu_promotion.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

namespace mqa {

// acc += w * relu(x) on one register of columns (one step of head_sum).
template <class Arch>
__simd_callee__ inline void add_head(AscendC::Reg::RegTensor<float>& acc, AscendC::Reg::RegTensor<float>& v,
                                     AscendC::Reg::RegTensor<float>& w, __ubuf__ float* x, AscendC::Reg::MaskReg& m) {
  namespace R = AscendC::Reg;
  R::LoadAlign(v, x);
  R::Relu(v, v, m);
  R::MulAddDst(acc, v, w, m);
}

// out[j] = acc[j] * scale[j] (unscaled: acc[j]) for the register's columns n0 + j in [ks, ke), -inf elsewhere.
template <class Arch>
__simd_callee__ inline void finish(__ubuf__ float* out, AscendC::Reg::RegTensor<float>& acc,
                                   AscendC::Reg::RegTensor<float>& ninf, __ubuf__ float* scale, uint32_t scaled,
                                   int32_t n0, int32_t ks, int32_t ke, AscendC::Reg::MaskReg& m) {
  namespace R = AscendC::Reg;
  R::RegTensor<float> s;
  R::MaskReg valid;
  if (scaled != 0) {
    R::LoadAlign(s, scale);
    R::Mul(acc, acc, s, m);
  }
  vreg::column_range(valid, n0, ks, ke, m);
  R::Select(acc, acc, ninf, valid);
  R::StoreAlign(out, acc, m);
}

// One query's logits over n columns: out[j] = sum over its `heads` rows h of w[h] * relu(x[h * x_row + j]),
// then finish's scale and mask. The columns go kRegs registers at a time; their sums stay in registers over
// the heads, so each score costs a load, a ReLU and a multiply-add (each head's weight one broadcast load
// per kRegs registers).
template <class Arch, int kRegs>
__simd_vf__ inline void head_sum(__ubuf__ float* out, __ubuf__ float* x, uint32_t x_row, __ubuf__ float* w,
                                 uint16_t heads, uint32_t n, __ubuf__ float* scale, uint32_t scaled, int32_t n0,
                                 int32_t ks, int32_t ke) {
  static_assert(kRegs == 1 || kRegs == 2 || kRegs == 4, "one, two or four registers of columns");
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>, kChunk = kRegs * kL;
  R::RegTensor<float> a0, a1, a2, a3, v, wv, ninf;
  R::MaskReg all = R::CreateMask<float>(), m0, m1, m2, m3;
  R::Duplicate(ninf, -__builtin_huge_valf(), all);
  uint32_t count = n;
  const uint16_t chunks = uint16_t((n + kChunk - 1) / kChunk);
  for (uint16_t c = 0; c < chunks; ++c) {
    const uint32_t at = uint32_t(c) * kChunk;
    m0 = R::UpdateMask<float>(count);
    R::Duplicate(a0, 0.0f, all);
    if constexpr (kRegs > 1) {
      m1 = R::UpdateMask<float>(count);
      R::Duplicate(a1, 0.0f, all);
    }
    if constexpr (kRegs > 2) {
      m2 = R::UpdateMask<float>(count);
      m3 = R::UpdateMask<float>(count);
      R::Duplicate(a2, 0.0f, all);
      R::Duplicate(a3, 0.0f, all);
    }
    for (uint16_t h = 0; h < heads; ++h) {
      __ubuf__ float* row = x + uint32_t(h) * x_row + at;
      R::LoadAlign<float, R::LoadDist::DIST_BRC_B32>(wv, w + h);
      add_head<Arch>(a0, v, wv, row, m0);
      if constexpr (kRegs > 1) add_head<Arch>(a1, v, wv, row + kL, m1);
      if constexpr (kRegs > 2) {
        add_head<Arch>(a2, v, wv, row + 2 * kL, m2);
        add_head<Arch>(a3, v, wv, row + 3 * kL, m3);
      }
    }
    const int32_t col = n0 + int32_t(at);
    finish<Arch>(out + at, a0, ninf, scale + at, scaled, col, ks, ke, m0);
    if constexpr (kRegs > 1) finish<Arch>(out + at + kL, a1, ninf, scale + at + kL, scaled, col + kL, ks, ke, m1);
    if constexpr (kRegs > 2) {
      finish<Arch>(out + at + 2 * kL, a2, ninf, scale + at + 2 * kL, scaled, col + 2 * kL, ks, ke, m2);
      finish<Arch>(out + at + 3 * kL, a3, ninf, scale + at + 3 * kL, scaled, col + 3 * kL, ks, ke, m3);
    }
  }
}

// head_sum on the fewest registers of columns (one, two or four) that hold n columns.
template <class Arch, class... Args>
__aicore__ inline void head_sum_fitting(uint32_t n, Args... args) {
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  if (n <= kL) head_sum<Arch, 1>(args...);
  else if (n <= 2 * kL) head_sum<Arch, 2>(args...);
  else head_sum<Arch, 4>(args...);
}

}  // namespace mqa

template <class ArchTag = arch::Ascend950>
struct MqaVecTarget {
  using Arch = ArchTag;
  using Ctx = VecCtx<Arch>;
  using Job = kernel::MqaJob<kernel::MqaSegment>;

  __aicore__ static inline int64_t group_idx(const Ctx&) { return AscendC::GetBlockIdx() / AscendC::GetSubBlockNum(); }
  __aicore__ static inline int64_t group_num(const Ctx&) { return AscendC::GetBlockNum(); }
  __aicore__ static inline int64_t sub_idx(const Ctx&) { return AscendC::GetSubBlockIdx(); }
  // The tile's rows this vector core reduces: its half.
  __aicore__ static inline block::RowRange rows_of(int64_t rows, int64_t sub) {
    return block::vector_core_rows(rows, sub);
  }

  // Tiles whose inputs are in the UB at once: stage(job) copies a tile's KV scales and its rows' weights in,
  // tile(job) reduces the tile's scores with them once the cube has sent them; the kernel stages up to
  // kStaged - 1 tiles ahead of the one it reduces, so the copies' latency is hidden by the reductions.
  static constexpr int kStaged = 8;

  class MqaEpilogue {
    using InRing = Ring<kStaged, Pipe::kMTE2, Pipe::kV>;
    using OutRing = Ring<2, Pipe::kV, Pipe::kMTE3>;
    static constexpr uint32_t kUbBlock = 32;

   public:
    // The promotion slots first (no accumulator: the sums stay in registers): the cube's Fixpipe writes them
    // at the UB's start. A stage holds the scales (one fp32 per column) and then the weights, each query's
    // run 32 B aligned (at most one block a row).
    template <class Tiling>
    __aicore__ inline MqaEpilogue(Ctx& ctx, const kernel::GemmArgs&, const Tiling& t, const DgaMqaParams& p)
        : ctx_(ctx), p_(p), ub_(t.block_m, t.block_n), slots_(ctx.alloc(Pos::kUB, ub_.slots_bytes())), rx_(ub_),
          row_bytes_(align_block(uint32_t(t.block_n) * uint32_t(sizeof(float)))),
          in_(ctx, {{Pos::kUB, row_bytes_ + ub_.rows * kUbBlock}}, "mqa kv scales and weights"),
          out_(ctx, {{Pos::kUB, row_bytes_}}, "mqa logits") {}

    // The tile's inputs into the next input stage (the scores come from the cube).
    __aicore__ inline void stage(const kernel::GemmProblem&, const Job& job) {
      if (job.rows <= 0) return;
      const Tile t = in_.acquire();
      if (job.seg.kv_scale != 0)  // FP8: the KV rows' fp32 scales (FP4: applied by the cube)
        copy_in(t.offset, job.seg.kv_scale + uint64_t(job.n0) * sizeof(float), uint32_t(job.cols));
      uint32_t at = t.offset + row_bytes_;
      for (kernel::MqaQuery x = kernel::mqa_first(job, p_.heads); x.count > 0; x = kernel::mqa_next(job, p_.heads, x)) {
        copy_in(at, job.seg.weights + uint64_t(x.q * p_.w_stride + x.head) * sizeof(float), uint32_t(x.count));
        at += align_block(uint32_t(x.count) * uint32_t(sizeof(float)));
      }
      in_.commit();
    }

    __aicore__ inline void tile(const Job& job) {
      const uint32_t part = slots_.offset + rx_.receive();
      if (job.rows > 0) {
        const Tile in = in_.consume();
        uint32_t w = in.offset + row_bytes_;
        for (kernel::MqaQuery x = kernel::mqa_first(job, p_.heads); x.count > 0;
             x = kernel::mqa_next(job, p_.heads, x)) {
          query(job, x.q, part + uint32_t(x.first) * ub_.row_values * uint32_t(sizeof(float)), w, in.offset,
                uint16_t(x.count));
          w += align_block(uint32_t(x.count) * uint32_t(sizeof(float)));
        }
        in_.release();
      }
      rx_.release();
    }

   private:
    __aicore__ static inline uint32_t align_block(uint32_t bytes) { return (bytes + kUbBlock - 1) / kUbBlock * kUbBlock; }

    __aicore__ inline void copy_in(uint32_t ub_offset, uint64_t gm, uint32_t values) {
      AscendC::DataCopyPad(ctx_.template tensor<float>(Tile{Pos::kUB, ub_offset, 0}), gm_at<float>(gm),
                           AscendC::DataCopyExtParams(1, values * uint32_t(sizeof(float)), 0, 0, 0),
                           AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    }

    // Query q's heads (rows at `scores`, weights at `w`) into its logits row's columns [n0, n0 + cols).
    __aicore__ inline void query(const Job& job, int64_t q, uint32_t scores, uint32_t w, uint32_t scale,
                                 uint16_t heads) {
      const int32_t ks = job.seg.ks != 0 ? gm_at<int32_t>(job.seg.ks).GetValue(uint64_t(q)) : 0;
      const int32_t ke = gm_at<int32_t>(job.seg.ke).GetValue(uint64_t(q));
      const uint32_t scaled = job.seg.kv_scale != 0 ? 1u : 0u, n = uint32_t(job.cols);
      const int32_t n0 = int32_t(job.seg.col0 + job.n0);
      const Tile o = out_.acquire();
      __ubuf__ float* out = ub<float>(o.offset);
      mqa::head_sum_fitting<Arch>(n, out, ub<float>(scores), ub_.row_values, ub<float>(w), heads, n,
                                  ub<float>(scale), scaled, n0, ks, ke);
      out_.commit();
      const Tile st = out_.consume();
      AscendC::SetAtomicAdd<float>();
      AscendC::DataCopyPad(gm_at<float>(job.seg.logits + uint64_t(q * p_.logits_stride + job.n0) * sizeof(float)),
                           ctx_.template tensor<float>(st),
                           AscendC::DataCopyExtParams(1, n * uint32_t(sizeof(float)), 0, 0, 0));
      AscendC::SetAtomicNone();
      out_.release();
    }

    template <class T>
    __aicore__ inline __ubuf__ T* ub(uint32_t byte_offset) {
      return reinterpret_cast<__ubuf__ T*>(ctx_.template tensor<T>(Tile{Pos::kUB, byte_offset, 0}).GetPhyAddr());
    }

    Ctx& ctx_;
    DgaMqaParams p_;
    PromotionUb ub_;
    Tile slots_;
    PromotionReceiver rx_;
    uint32_t row_bytes_;
    InRing in_;
    OutRing out_;
  };
};

}  // namespace deepgemm_ascend::tile::npu
