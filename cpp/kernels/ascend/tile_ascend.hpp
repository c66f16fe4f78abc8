// The NPU implementation of the tile primitives (DESIGN.md "One kernel, two targets") for dav-3510,
// each a few lines over the AscendC API (shared/reference/ascend950.md §4-§6). Compiled by bisheng
// only; no kernel logic lives here. NOT validated on hardware: no 950 was available to this project
// (scripts/npu_validate.sh is what a user with a device runs).
//
// Layouts: L1 and L0A Nz, L0B Zn, L0C Nz fp32 (§4). Positions and steps of LoadData count fractals
// (16 rows x 32 bytes); Fixpipe strides count elements on 3510.
#pragma once

#include "kernel_operator.h"

namespace deepgemm_ascend::tile::npu {

template <class T>
using Gm = AscendC::GlobalTensor<T>;
template <class T>
using Local = AscendC::LocalTensor<T>;

constexpr uint32_t kC0Bytes = 32;
constexpr uint32_t kFractalRows = 16;

template <class T>
__aicore__ inline constexpr uint32_t c0() { return kC0Bytes / sizeof(T); }
__aicore__ inline uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t align16(uint32_t a) { return ceil_div(a, kFractalRows) * kFractalRows; }

// ---- MTE2: GM -> L1 -------------------------------------------------------------------------------
// A row-major (ND) rows x cols tile with leading dimension ld (elements) into an Nz tile whose
// fractal columns are l1_rows (aligned) rows apart. Partial C0 columns are zero-filled by the DMA.
template <class T>
__aicore__ inline void copy_gm_to_l1_nd(const Local<T>& l1, const Gm<T>& gm, uint32_t rows, uint32_t cols,
                                        uint32_t ld, uint32_t l1_rows) {
  AscendC::Nd2NzParams p;
  p.ndNum = 1;
  p.nValue = rows;
  p.dValue = cols;
  p.srcNdMatrixStride = 0;
  p.srcDValue = ld;
  p.dstNzC0Stride = l1_rows;
  p.dstNzNStride = 1;
  p.dstNzMatrixStride = 0;
  AscendC::DataCopy(l1, gm, p);
}

// The same tile stored column-major (DN: the tile's rows are contiguous, ld between columns), e.g. the
// "tn" A operand or an MN-major scale tensor (§4: DN2NZ is new on 950).
template <class T>
__aicore__ inline void copy_gm_to_l1_dn(const Local<T>& l1, const Gm<T>& gm, uint32_t rows, uint32_t cols,
                                        uint32_t ld, uint32_t l1_rows) {
  AscendC::Dn2NzParams p;
  p.dnNum = 1;
  p.nValue = rows;
  p.dValue = cols;
  p.srcDnMatrixStride = 0;
  p.srcDValue = ld;
  p.dstNzC0Stride = l1_rows;
  p.dstNzNStride = 1;
  p.dstNzMatrixStride = 0;
  AscendC::DataCopy(l1, gm, p);
}

// ---- MTE1: L1 -> L0A / L0B ----------------------------------------------------------------------
// K range [k0, k0 + k) of an Nz L1 tile of l1_rows rows: A stays Nz; B (stored [N, K] in L1) becomes Zn
// by the transposing load (§4). One call each.
template <class T>
__aicore__ inline AscendC::LoadData2DParamsV2 load2d_params(uint32_t l1_rows, uint32_t mn, uint32_t k0, uint32_t k,
                                                            bool is_b) {
  AscendC::LoadData2DParamsV2 p;
  p.mStartPosition = 0;
  p.kStartPosition = k0 / c0<T>();
  p.mStep = ceil_div(mn, kFractalRows);
  p.kStep = ceil_div(k, c0<T>());
  p.srcStride = l1_rows / kFractalRows;
  p.dstStride = is_b ? ceil_div(k, kFractalRows) : ceil_div(mn, kFractalRows);
  p.ifTranspose = is_b;
  return p;
}

template <class T>
__aicore__ inline void load_l1_to_l0a(const Local<T>& l0a, const Local<T>& l1, uint32_t l1_rows, uint32_t m,
                                      uint32_t k0, uint32_t k) {
  AscendC::LoadData(l0a, l1, load2d_params<T>(l1_rows, m, k0, k, false));
}

template <class T>
__aicore__ inline void load_l1_to_l0b(const Local<T>& l0b, const Local<T>& l1, uint32_t l1_rows, uint32_t n,
                                      uint32_t k0, uint32_t k) {
  AscendC::LoadData(l0b, l1, load2d_params<T>(l1_rows, n, k0, k, true));
}

// MX operands: the data and its UE8M0 scales (int16 pairs, MN-major in L1: zZ for A, nN for B) in one
// call; the hardware places the scales in L0A_MX / L0B_MX at the data address / 16 (§5).
template <class T, class S>
__aicore__ inline void load_l1_to_l0_mx(const Local<T>& l0, const Local<T>& l1, const Local<S>& l1_scales,
                                        uint32_t l1_rows, uint32_t mn, uint32_t k0, uint32_t k, bool is_b) {
  constexpr uint32_t kScaleGroupK = 64;  // two 32-value groups per 16-bit scale element
  AscendC::LoadData2DMxParams mx;
  mx.xStartPosition = 0;
  mx.yStartPosition = k0 / kScaleGroupK;
  mx.xStep = ceil_div(mn, kFractalRows);
  mx.yStep = ceil_div(k, kScaleGroupK);
  mx.srcStride = ceil_div(l1_rows, kFractalRows);
  mx.dstStride = ceil_div(mn, kFractalRows);
  AscendC::LoadData(l0, l1, l1_scales, load2d_params<T>(l1_rows, mn, k0, k, is_b), mx);
}

// ---- M: the cube ----------------------------------------------------------------------------------
// L0C (+)= L0A x L0B over k; init zeroes L0C first. GEMV is disabled so m == 1 still reads Nz (§4).
template <class Acc, class T>
__aicore__ inline void mmad(const Local<Acc>& l0c, const Local<T>& l0a, const Local<T>& l0b, uint32_t m,
                            uint32_t n, uint32_t k, bool init) {
  AscendC::MmadParams p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.cmatrixInitVal = init;
  p.cmatrixSource = false;
  p.disableGemv = true;
  AscendC::Mmad(l0c, l0a, l0b, p);
  constexpr uint32_t kBarrierFreeFractals = 10;  // back-to-back accumulations need a barrier below this
  if ((align16(m) / kFractalRows) * (align16(n) / kFractalRows) < kBarrierFreeFractals)
    AscendC::PipeBarrier<PIPE_M>();
}

// ---- FIX: L0C -> GM / UB --------------------------------------------------------------------------
// The Nz fp32 tile (m x n valid, m_pad rows in L0C) to row-major D with leading dimension ld, cast to
// D's type with round to nearest even (§4: F322BF16 / F322F16, or fp32 unchanged).
template <class D>
__aicore__ inline void fixpipe_to_gm(const Gm<D>& d, const Local<float>& l0c, uint32_t m, uint32_t n,
                                     uint32_t m_pad, uint32_t ld) {
  AscendC::FixpipeParamsArch3510 p;
  p.mSize = m;
  p.nSize = n;
  p.srcStride = m_pad;
  p.dstStride = ld;  // elements on 3510
  if constexpr (AscendC::IsSameType<D, bfloat16_t>::value) p.quantPre = QuantMode_t::F322BF16;
  if constexpr (AscendC::IsSameType<D, half>::value) p.quantPre = QuantMode_t::F322F16;
  AscendC::Fixpipe<D, float, AscendC::CFG_ROW_MAJOR>(d, l0c, p);
}

// The same tile into this core's UB for a vector-side epilogue (MQA ReLU / weights, SwiGLU).
__aicore__ inline void fixpipe_to_ub(const Local<float>& ub, const Local<float>& l0c, uint32_t m, uint32_t n,
                                     uint32_t m_pad) {
  AscendC::FixpipeParamsArch3510 p;
  p.mSize = m;
  p.nSize = n;
  p.srcStride = m_pad;
  p.dstStride = align16(n);
  AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(ub, l0c, p);
}

// ---- events -------------------------------------------------------------------------------------
// Intra-core flags between pipes (ids 0..5 are ours, §6), and AIC <-> AIV flags of a mixed kernel.
template <AscendC::HardEvent E>
__aicore__ inline void set_flag(int id) { AscendC::SetFlag<E>(id); }
template <AscendC::HardEvent E>
__aicore__ inline void wait_flag(int id) { AscendC::WaitFlag<E>(id); }

constexpr uint8_t kCrossCoreAicAiv = 2;  // mode 2: AIC <-> both AIVs of its group
template <pipe_t P>
__aicore__ inline void cross_core_set(uint16_t id) { AscendC::CrossCoreSetFlag<kCrossCoreAicAiv, P>(id); }
__aicore__ inline void cross_core_wait(uint16_t id) { AscendC::CrossCoreWaitFlag(id); }

}  // namespace deepgemm_ascend::tile::npu
