// A vector-core kernel that converts a row-major matrix between fp32 and bf16 (RINT), widens packed FP4
// e2m1 to fp8 e4m3 (exact), or zeroes an fp32 one (no source; -inf past each row's length with lens), for
// the NPU dispatch's workspaces: a bf16 D with C is computed as D = bf16(f32(C) + A @ B^T) in one fp32
// accumulation, as upstream rounds it once; an FP8 x FP4 GEMM widens its FP4 operand for the fp8 MX cube
// (which pairs fp8 with fp8 only). Each step converts one chunk of one row: GM -> UB (MTE2)
// through an eight-stage input ring (the loads of the next rows in flight while this one is cast: a short
// row's load is mostly the GM read latency), the cast on V, UB -> GM (MTE3) through a two-stage output
// ring. Part of the NPU primitive layer; NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "npu_ctx.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

namespace convert {

// dst[i] = 0 where start <= c0 + i < len, -inf elsewhere, for i < n.
template <class Arch>
__simd_vf__ inline void fill(__ubuf__ float* dst, uint32_t n, int32_t c0, int32_t start, int32_t len) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<float> zero, ninf, v;
  R::MaskReg inside, all = R::CreateMask<float>();
  R::Duplicate(zero, 0.0f, all);
  R::Duplicate(ninf, -__builtin_huge_valf(), all);
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    vreg::column_range(inside, c0 + int32_t(i * kL), start, len, m);
    R::Select(v, zero, ninf, inside);
    R::StoreAlign(dst + i * kL, v, m);
  }
}

}  // namespace convert

template <class Arch = arch::Ascend950>
class ConvertRows {
  static constexpr uint32_t kInStages = 8, kOutStages = 2, kStageBytes = Arch::kUBBytes / 16;
  using InRing = Ring<kInStages, Pipe::kMTE2, Pipe::kV>;
  using OutRing = Ring<kOutStages, Pipe::kV, Pipe::kMTE3>;

 public:
  __aicore__ inline ConvertRows(VecCtx<Arch>& ctx)
      : ctx_(ctx),
        in_(ctx, {{Pos::kUB, kStageBytes}}, "convert in"),
        out_(ctx, {{Pos::kUB, kStageBytes}}, "convert out") {}

  // Values per step: a chunk of fp32 fills a stage.
  __aicore__ static constexpr int64_t chunk() {
    return int64_t(kStageBytes / sizeof(float) / vreg::kLanes<Arch> * vreg::kLanes<Arch>);
  }

  // IEEE casts for the run (+-inf stay infinite, overflow becomes inf).
  __aicore__ inline void run(const DgaConvertParams& p) {
    const IeeeCasts ieee;
    steps(p);
  }

 private:
  __aicore__ inline void steps(const DgaConvertParams& p) {
    const bool to_bf16 = p.dst_dtype == int32_t(core::DType::kBF16);
    const bool fp4 = p.src_dtype == int32_t(core::DType::kFP4E2M1x2);
    const int64_t chunks = layout::ceil_div(p.src.cols, chunk());
    const int64_t core = AscendC::GetBlockIdx(), cores = AscendC::GetBlockNum();
    for (int64_t u = core; u < p.src.rows * chunks; u += cores) {
      const int64_t r = u / chunks, c0 = (u % chunks) * chunk();
      const uint32_t n = uint32_t(layout::imin(chunk(), p.src.cols - c0));
      if (p.src.addr == 0) fill(p, r, c0, n);
      else if (fp4) widen(p, r, c0, n);
      else if (to_bf16) step<float, bfloat16_t>(p, r, c0, n);
      else step<bfloat16_t, float>(p, r, c0, n);
    }
  }

  template <class S, class D>
  __aicore__ inline void step(const DgaConvertParams& p, int64_t r, int64_t c0, uint32_t n) {
    const Tile in = in_.acquire();
    const AscendC::DataCopyExtParams load(1, n * uint32_t(sizeof(S)), 0, 0, 0);
    const uint64_t src = p.src.addr + uint64_t((r * p.src.row_stride + c0) * int64_t(sizeof(S)));
    AscendC::DataCopyPad(ctx_.template tensor<S>(in), gm_at<S>(src), load,
                         AscendC::DataCopyPadExtParams<S>(false, 0, 0, S(0)));
    in_.commit();
    const Tile x = in_.consume();
    const Tile out = out_.acquire();
    vreg::convert<Arch, D, S>(ctx_.template ub<D>(out), ctx_.template ub<S>(x), n);
    in_.release();
    out_.commit();
    const Tile o = out_.consume();
    const AscendC::DataCopyExtParams store(1, n * uint32_t(sizeof(D)), 0, 0, 0);
    AscendC::DataCopyPad(gm_at<D>(p.dst.addr + uint64_t((r * p.dst.row_stride + c0) * int64_t(sizeof(D)))),
                         ctx_.template tensor<D>(o), store);
    out_.release();
  }

  // Packed FP4 -> e4m3: columns count values (even), row strides too; n / 2 bytes in, n out.
  __aicore__ inline void widen(const DgaConvertParams& p, int64_t r, int64_t c0, uint32_t n) {
    const Tile in = in_.acquire();
    const AscendC::DataCopyExtParams load(1, n / 2, 0, 0, 0);
    const uint64_t src = p.src.addr + uint64_t((r * p.src.row_stride + c0) / 2);
    AscendC::DataCopyPad(ctx_.template tensor<uint8_t>(in), gm_at<uint8_t>(src), load,
                         AscendC::DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
    in_.commit();
    const Tile x = in_.consume();
    const Tile out = out_.acquire();
    vreg::widen_fp4<Arch>(ctx_.template ub<uint8_t>(out), ctx_.template ub<uint8_t>(x), n);
    in_.release();
    out_.commit();
    const Tile o = out_.consume();
    const AscendC::DataCopyExtParams store(1, n, 0, 0, 0);
    AscendC::DataCopyPad(gm_at<uint8_t>(p.dst.addr + uint64_t(r * p.dst.row_stride + c0)),
                         ctx_.template tensor<uint8_t>(o), store);
    out_.release();
  }

  // No source: the fp32 destination is zeroed (-inf from column lens[r] on, with lens; before column
  // starts[r], with starts).
  __aicore__ inline void fill(const DgaConvertParams& p, int64_t r, int64_t c0, uint32_t n) {
    const int32_t len = p.lens != 0 ? gm_at<int32_t>(p.lens).GetValue(uint64_t(r)) : int32_t(c0 + n);
    const int32_t start = p.starts != 0 ? gm_at<int32_t>(p.starts).GetValue(uint64_t(r)) : int32_t(c0);
    const Tile out = out_.acquire();
    convert::fill<Arch>(ctx_.template ub<float>(out), n, int32_t(c0), start, len);
    out_.commit();
    const Tile o = out_.consume();
    const AscendC::DataCopyExtParams store(1, n * uint32_t(sizeof(float)), 0, 0, 0);
    AscendC::DataCopyPad(gm_at<float>(p.dst.addr + uint64_t((r * p.dst.row_stride + c0) * int64_t(sizeof(float)))),
                         ctx_.template tensor<float>(o), store);
    out_.release();
  }

  VecCtx<Arch>& ctx_;
  InRing in_;
  OutRing out_;
};

// The kernel body of dga_convert_rows.
__aicore__ inline void run_convert_rows(const DgaConvertParams& p) {
  VecCtx<arch::Ascend950> ctx;
  ConvertRows<> op(ctx);
  op.run(p);
}

}  // namespace deepgemm_ascend::tile::npu
