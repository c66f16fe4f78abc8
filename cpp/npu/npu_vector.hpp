// The vector-core target of the promoted GEMM's vector side (kernel/gemm_promotion.hpp): the group and
// sub-core indices, the promotion receiver over the UB layout of npu_promotion.hpp, and the vector
// primitives it needs, each a few lines over the AscendC API. Part of the NPU primitive layer.
// [inferred] On a vector core of a mix kernel, GetBlockIdx() counts vector cores, so the cube group is
// GetBlockIdx() / GetSubBlockNum(). NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/layout/scale_ref.hpp"
#include "npu_ctx.hpp"
#include "npu_promotion.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

namespace promotion {

// acc[j] += part[j] * scale[j] * f for j < n.
template <class Arch>
__simd_vf__ inline void axpy_columns(__ubuf__ float* acc, __ubuf__ float* part, __ubuf__ float* scale, float f,
                                     uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<float> a, x, sc;
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign(x, part + i * kL);
    R::LoadAlign(sc, scale + i * kL);
    R::Mul(x, x, sc, m);
    R::LoadAlign(a, acc + i * kL);
    R::Axpy(a, x, f, m);
    R::StoreAlign(acc + i * kL, a, m);
  }
}

// acc[j] += p0[j] * f0, then += p1[j] * f1, for j < n: two K blocks' Axpy with one load and one store of
// the accumulator.
template <class Arch>
__simd_vf__ inline void axpy2(__ubuf__ float* acc, __ubuf__ float* p0, __ubuf__ float* p1, float f0, float f1,
                              uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<float> a, x;
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign(a, acc + i * kL);
    R::LoadAlign(x, p0 + i * kL);
    R::Axpy(a, x, f0, m);
    R::LoadAlign(x, p1 + i * kL);
    R::Axpy(a, x, f1, m);
    R::StoreAlign(acc + i * kL, a, m);
  }
}

}  // namespace promotion

template <class ArchTag = arch::Ascend950>
struct VecTarget {
  using Arch = ArchTag;
  using Ctx = VecCtx<Arch>;
  // The shortest run of columns axpy scales (32 B of fp32: a UB operand starts 32 B aligned).
  static constexpr int64_t kScaleRun = int64_t(Arch::kUBAlign / sizeof(float));

  __aicore__ static inline int64_t group_idx(const Ctx&) { return AscendC::GetBlockIdx() / AscendC::GetSubBlockNum(); }
  __aicore__ static inline int64_t group_num(const Ctx&) { return AscendC::GetBlockNum(); }
  __aicore__ static inline int64_t sub_idx(const Ctx&) { return AscendC::GetSubBlockIdx(); }

  // The scale of row `mn` and K block `kb` of an fp32 scale tensor in GM (a scalar read).
  __aicore__ static inline float scale(const layout::ScaleRef& s, int64_t mn, int64_t kb) {
    Gm<float> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(reinterpret_cast<uintptr_t>(s.base)));
    return g.GetValue(uint64_t((mn / s.gran_mn) * s.mn_stride + kb * s.k_stride));
  }

  // The vector core's promotion state: the receiver, its accumulator and an output ring (the store of a
  // tile must leave the accumulator before the next tile zeroes it).
  class Promotion {
    using OutRing = Ring<1, Pipe::kV, Pipe::kMTE3>;
    using ScaleRing = Ring<1, Pipe::kMTE2, Pipe::kV>;

   public:
    // The products the vector core holds at once (kernel/gemm_promotion.hpp: axpy of one or two K blocks).
    static constexpr int kMaxBlocks = 2;

    __aicore__ inline Promotion(Ctx& ctx, int64_t block_m, int64_t block_n)
        : ctx_(ctx),
          ub_(block_m, block_n, kGemmPromotionSlots),
          rx_(ub_),
          out_(ctx, {{Pos::kUB, ub_.bytes()}}, "promotion"),
          scales_(ctx, {{Pos::kUB, ub_.row_values * uint32_t(sizeof(float))}}, "column scales") {}

    // Zeroes the accumulator for a tile (after the previous tile's store).
    __aicore__ inline void begin_tile() {
      base_ = out_.acquire().offset;
      AscendC::Duplicate(acc(), 0.0f, int32_t(ub_.rows * ub_.row_values));
    }
    // Waits for the next K block's product, held as product j (< kMaxBlocks) until its release.
    __aicore__ inline void receive(int j) { part_[j] = rx_.receive(); }
    // The oldest product held may be overwritten.
    __aicore__ inline void release() { rx_.release(); }

    // acc[r, c0:c1] += product j [r, c0:c1] * f[j] for j < Blocks, in order (c0 a multiple of 8: 32 B
    // aligned).
    template <int Blocks>
    __aicore__ inline void axpy(int64_t r, int64_t c0, int64_t c1, const float* f) {
      static_assert(Blocks == 1 || Blocks == 2, "one or two K blocks");
      const uint32_t at = (uint32_t(r) * ub_.row_values + uint32_t(c0)) * uint32_t(sizeof(float));
      if constexpr (Blocks == 1) {
        const Local<float> part = ctx_.template tensor<float>({Pos::kUB, base_ + part_[0] + at, 0});
        AscendC::Axpy(acc()[at / sizeof(float)], part, f[0], int32_t(c1 - c0));
      } else {
        promotion::axpy2<Arch>(ub(base_ + ub_.acc() + at), ub(base_ + part_[0] + at), ub(base_ + part_[1] + at), f[0],
                               f[1], uint32_t(c1 - c0));
      }
    }

    // The scales of columns [n0, n0 + cols) for K block kb into the UB (one per column, unit stride
    // along N: a single GM -> UB run), for axpy_columns until release_column_scales.
    __aicore__ inline void stage_column_scales(const layout::ScaleRef& s, int64_t n0, int64_t cols, int64_t kb) {
      const Tile t = scales_.acquire();
      const uint64_t at = uint64_t(reinterpret_cast<uintptr_t>(s.base)) +
                          uint64_t(n0 * s.mn_stride + kb * s.k_stride) * sizeof(float);
      AscendC::DataCopyPad(ctx_.template tensor<float>(t), gm_at<float>(at),
                           AscendC::DataCopyExtParams(1, uint32_t(cols) * uint32_t(sizeof(float)), 0, 0, 0),
                           AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
      scales_.commit();
      col_scales_ = scales_.consume().offset;
    }
    __aicore__ inline void release_column_scales() { scales_.release(); }

    // acc[r, :cols] += part[r, :cols] * column_scale[:cols] * f.
    __aicore__ inline void axpy_columns(int64_t r, int64_t cols, float f) {
      const uint32_t at = (uint32_t(r) * ub_.row_values) * uint32_t(sizeof(float));
      promotion::axpy_columns<Arch>(ub(base_ + ub_.acc() + at), ub(base_ + part_[0] + at), ub(col_scales_), f,
                                    uint32_t(cols));
    }

    // The tile's rows x cols to D (cast to bf16, or fp32; with `accumulate` added to D in GM). The cast
    // runs on V before the ring's commit, so that the store (MTE3) waits for it.
    __aicore__ inline void store(const layout::MutMatrixRef& d, core::DType dtype, bool accumulate) {
      const bool fp32 = dtype == core::DType::kFP32;
      if (d.rows > 0 && !fp32) cast_bf16(uint32_t(d.rows));
      out_.commit();
      out_.consume();
      if (d.rows > 0) {
        if (fp32) store_rows<float>(d, acc(), accumulate);
        else store_rows<bfloat16_t>(d, out_rows(), false);
      }
      out_.release();
    }

   private:
    __aicore__ inline __ubuf__ float* ub(uint32_t byte_offset) {
      return reinterpret_cast<__ubuf__ float*>(
          ctx_.template tensor<float>(Tile{Pos::kUB, byte_offset, 0}).GetPhyAddr());
    }
    __aicore__ inline Local<float> acc() { return ctx_.template tensor<float>({Pos::kUB, base_ + ub_.acc(), 0}); }
    __aicore__ inline Local<bfloat16_t> out_rows() {
      return ctx_.template tensor<bfloat16_t>({Pos::kUB, base_ + ub_.out(), 0});
    }
    __aicore__ inline void cast_bf16(uint32_t rows) {
      vreg::convert<Arch, bfloat16_t, float>(reinterpret_cast<__ubuf__ bfloat16_t*>(out_rows().GetPhyAddr()),
                                             reinterpret_cast<__ubuf__ float*>(acc().GetPhyAddr()),
                                             rows * ub_.row_values);
    }
    template <class T>
    __aicore__ inline void store_rows(const layout::MutMatrixRef& d, const Local<T>& src, bool accumulate) {
      Gm<T> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(reinterpret_cast<uintptr_t>(d.base)) + d.origin);
      const uint32_t row_bytes = uint32_t(d.cols) * sizeof(T), ub_row = ub_.row_values * sizeof(T);
      constexpr uint32_t kBlock = Arch::kC0Bytes;
      AscendC::DataCopyExtParams p(uint16_t(d.rows), row_bytes, (ub_row - (row_bytes + kBlock - 1) / kBlock * kBlock) / kBlock,
                                   int64_t(d.row_stride - d.cols) * int64_t(sizeof(T)), 0);
      if (accumulate) AscendC::SetAtomicAdd<T>();
      AscendC::DataCopyPad(g, src, p);
      if (accumulate) AscendC::SetAtomicNone();
    }

    Ctx& ctx_;
    PromotionUb ub_;
    PromotionReceiver rx_;
    OutRing out_;
    ScaleRing scales_;
    uint32_t base_ = 0, part_[kMaxBlocks] = {}, col_scales_ = 0;
  };
};

}  // namespace deepgemm_ascend::tile::npu
