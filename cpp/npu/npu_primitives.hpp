// The tile primitives of the NPU target for dav-3510, each a few lines over the AscendC API
// (shared/reference/ascend950.md §4-§6). Part of the NPU primitive layer: no kernel logic lives here.
// NOT validated on hardware: no 950 was available to this project.
//
// Layouts: L1 Nz; L0A Nz of A [M, K]; L0B Zn of the K x N operand, which is byte for byte the Nz of
// B [N, K] that L1 holds, so B loads exactly like A (ISA Mmad; CATLASS copy_l1_to_l0b, [N, K] case);
// L0C Nz fp32. Units: LoadData 2D positions / steps count 16 rows along M and 32 B along K, its strides
// count 512 B fractals; the MX scale load counts 32 B along K (64 K values); Fixpipe strides count
// elements on 3510.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/cube_format.hpp"

namespace deepgemm_ascend::tile::npu {

template <class T>
using Gm = AscendC::GlobalTensor<T>;
template <class T>
using Local = AscendC::LocalTensor<T>;

constexpr uint32_t kFractalRows = arch::CubeFormat::kFractalRows;
constexpr uint32_t kC0Bits = arch::CubeFormat::kC0Bytes * 8;
constexpr uint32_t kMxBaseK = arch::MxFormat::kMxBaseK;  // K values per 32 B of packed scales

// Bits of one value of T (packed fp4: 4).
template <class T>
__aicore__ constexpr uint32_t value_bits() {
  if constexpr (AscendC::IsSameType<T, fp4x2_e2m1_t>::value) return 4;
  else return uint32_t(sizeof(T)) * 8;
}
// Values of T per C0 (32 B) row: 16 bf16, 32 fp8, 64 fp4.
template <class T>
__aicore__ constexpr uint32_t c0() { return kC0Bits / value_bits<T>(); }
__aicore__ inline uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t align16(uint32_t a) { return ceil_div(a, kFractalRows) * kFractalRows; }

// A GM tensor at byte address `addr` (launch parameters carry device addresses as uint64).
template <class T>
__aicore__ inline Gm<T> gm_at(uint64_t addr) {
  Gm<T> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(uintptr_t(addr)));
  return g;
}
// Every pipe finishes what it has issued before anything after (e.g. scalar UB writes around a store).
__aicore__ inline void barrier_all() { AscendC::PipeBarrier<PIPE_ALL>(); }

// For its lifetime the vector core's casts follow the host's (fp32 -> bf16: overflow and infinities give inf,
// NaN stays NaN; the saturating fp32 -> e4m3 cast keeps NaN, as the host's and upstream's e4m3 casts do):
// CTRL[60] = 0 selects the casts' own NO_SAT / SAT instead of the saturating default, and CTRL[50] = 1 makes a
// saturating cast to fp8 give NaN for NaN instead of 0 (SetCtrlSpr(ISASI).md; Reg Cast.md, 饱和模式). The
// previous values are restored. Construct it after the kernel's context: the pipe's set-up (InitSocState)
// sets CTRL to its default, saturation included. The restore waits for every pipe first.
class IeeeCasts {
 public:
  __aicore__ inline IeeeCasts()
      : saved_(AscendC::GetCtrlSpr<kGlobalSatBit, kGlobalSatBit>()),
        saved_nan_(AscendC::GetCtrlSpr<kFp8NanBit, kFp8NanBit>()) {
    AscendC::SetCtrlSpr<kGlobalSatBit, kGlobalSatBit>(0);
    AscendC::SetCtrlSpr<kFp8NanBit, kFp8NanBit>(1);
  }
  __aicore__ inline ~IeeeCasts() {
    barrier_all();  // the casts issued before have run (CTRL is written at once)
    AscendC::SetCtrlSpr<kFp8NanBit, kFp8NanBit>(saved_nan_);
    AscendC::SetCtrlSpr<kGlobalSatBit, kGlobalSatBit>(saved_);
  }

 private:
  static constexpr int8_t kGlobalSatBit = 60, kFp8NanBit = 50;
  int64_t saved_, saved_nan_;
};

// For its lifetime the cube core's Fixpipe casts (fp32 -> bf16 / fp16) keep inf and NaN, as the host's casts
// do: the 950's reset CTRL (CTRL[60] = 1, CTRL[48] = 0) saturates them, inf -> +-max and NaN -> 0
// (L0C到GM数据搬运（Fixpipe）.md, 约束说明; SetCtrlSpr(ISASI).md); CTRL[48] = 1 is the global non-saturating mode.
// Construct it after the kernel's context (the pipe's set-up resets CTRL); the previous value is restored.
class IeeeFixpipeCasts {
 public:
  __aicore__ inline IeeeFixpipeCasts() : saved_(AscendC::GetCtrlSpr<kNoSatBit, kNoSatBit>()) {
    AscendC::SetCtrlSpr<kNoSatBit, kNoSatBit>(1);
  }
  __aicore__ inline ~IeeeFixpipeCasts() {
    barrier_all();  // the Fixpipes issued before have run (CTRL is written at once)
    AscendC::SetCtrlSpr<kNoSatBit, kNoSatBit>(saved_);
  }

 private:
  static constexpr int8_t kNoSatBit = 48;
  int64_t saved_;
};

// ---- MTE2: GM -> L1 -------------------------------------------------------------------------------
// A row-major (ND) rows x cols tile, ld values between rows, into an Nz tile whose fractal columns are
// l1_rows rows apart (32 B units). Partial C0 columns are zero-filled by the DMA. The 950's Nd2NzParams
// take dValue in 32 bits and srcDValue in 64 (a row stride of MN values, e.g. MN-major scale pairs of more
// than 65,535 rows, must not be cut to 16 bits); rows and l1_rows are a tile's, within 16 bits.
template <class T>
__aicore__ inline void copy_gm_to_l1_nd(const Local<T>& l1, const Gm<T>& gm, uint32_t rows, uint32_t cols,
                                        uint64_t ld, uint32_t l1_rows) {
  AscendC::Nd2NzParams p;
  p.ndNum = 1;
  p.nValue = uint16_t(rows);
  p.dValue = cols;
  p.srcNdMatrixStride = 0;
  p.srcDValue = ld;
  p.dstNzC0Stride = uint16_t(l1_rows);
  p.dstNzNStride = 1;
  p.dstNzMatrixStride = 0;
  AscendC::DataCopy(l1, gm, p);
}

// The same tile stored column-major (DN: the tile's rows are contiguous, ld values between columns),
// e.g. the "tn" A or the "nn" B operand (§4: DN2NZ is new on 950).
template <class T>
__aicore__ inline void copy_gm_to_l1_dn(const Local<T>& l1, const Gm<T>& gm, uint32_t rows, uint32_t cols,
                                        uint64_t ld, uint32_t l1_rows) {
  AscendC::Dn2NzParams p;
  p.dnNum = 1;
  p.nValue = uint16_t(rows);
  p.dValue = cols;
  p.srcDnMatrixStride = 0;
  p.srcDValue = ld;
  p.dstNzC0Stride = uint16_t(l1_rows);
  p.dstNzNStride = 1;
  p.dstNzMatrixStride = 0;
  AscendC::DataCopy(l1, gm, p);
}

// ---- MTE1: L1 -> L0A / L0B ----------------------------------------------------------------------
// K range [k0, k0 + k) of the mn valid rows of an Nz L1 tile (l1_rows aligned rows) into an Nz L0 tile
// of align16(mn) rows. Used for A into L0A and, unchanged, for B [N, K] into L0B (see the header).
template <class T>
__aicore__ inline AscendC::LoadData2DParamsV2 load2d_params(uint32_t l1_rows, uint32_t mn, uint32_t k0, uint32_t k) {
  AscendC::LoadData2DParamsV2 p;
  p.mStartPosition = 0;
  p.kStartPosition = k0 / c0<T>();
  p.mStep = uint16_t(ceil_div(mn, kFractalRows));
  p.kStep = uint16_t(ceil_div(k, c0<T>()));
  p.srcStride = int32_t(l1_rows / kFractalRows);
  p.dstStride = uint16_t(ceil_div(mn, kFractalRows));
  p.ifTranspose = false;
  return p;
}

template <class T>
__aicore__ inline void load_l1_to_l0(const Local<T>& l0, const Local<T>& l1, uint32_t l1_rows, uint32_t mn,
                                     uint32_t k0, uint32_t k) {
  AscendC::LoadData(l0, l1, load2d_params<T>(l1_rows, mn, k0, k));
}

// MX operands: the values (type T in L1, U in L0: mx_fp8_e4m3_t / mx_fp8_e5m2_t for fp8, so that the
// Mmad is the MX instruction; fp4x2_e2m1_t for both) and their UE8M0 scales in one call. In L1 each
// 16-row block of scales holds ceil(l1_k / 64) consecutive 32 B tiles (zZ for A, nN for B); the
// hardware places the scales in L0A_MX / L0B_MX at the data address / 16 (§5).
template <class T, class U>
__aicore__ inline void load_l1_to_l0_mx(const Local<U>& l0, const Local<T>& l1, const Local<fp8_e8m0_t>& l1_scales,
                                        uint32_t l1_rows, uint32_t l1_k, uint32_t mn, uint32_t k0, uint32_t k) {
  AscendC::LoadData2DMxParams mx;
  mx.xStartPosition = 0;
  mx.yStartPosition = uint16_t(k0 / kMxBaseK);
  mx.xStep = uint8_t(ceil_div(mn, kFractalRows));
  mx.yStep = uint8_t(ceil_div(k, kMxBaseK));
  mx.srcStride = uint16_t(ceil_div(l1_k, kMxBaseK));
  mx.dstStride = uint16_t(ceil_div(k, kMxBaseK));
  AscendC::LoadData<T, U>(l0, l1, l1_scales, load2d_params<T>(l1_rows, mn, k0, k), mx);
}

// ---- M: the cube ----------------------------------------------------------------------------------
// The unit flags of L0C (Mmad / Fixpipe unitFlag, one per 512 B): kUnitKeep waits for a block to be free
// (read by a Fixpipe) before writing or to be set before reading, kUnitChange also flips it afterwards.
constexpr uint8_t kUnitOff = 0, kUnitKeep = 2, kUnitChange = 3;

// L0C (+)= L0A x L0B over k (m, n, k the valid sizes); init zeroes L0C first. GEMV is disabled so
// m == 1 still reads Nz (§4). Back-to-back accumulations into few fractals need a PIPE_M barrier; the
// rule counts fractals by integer division of the actual m and n (ISA Mmad).
template <class Acc, class A, class B>
__aicore__ inline void mmad(const Local<Acc>& l0c, const Local<A>& l0a, const Local<B>& l0b, uint32_t m, uint32_t n,
                            uint32_t k, bool init, uint8_t unit_flag = kUnitOff) {
  AscendC::MmadParams p;
  p.m = uint16_t(m);
  p.n = uint16_t(n);
  p.k = uint16_t(k);
  p.unitFlag = unit_flag;
  p.cmatrixInitVal = init;
  p.cmatrixSource = false;
  p.disableGemv = true;
  AscendC::Mmad(l0c, l0a, l0b, p);
  if ((m / kFractalRows) * (n / kFractalRows) < arch::CubeFormat::kMmadBarrierFreeFractals)
    AscendC::PipeBarrier<PIPE_M>();
}

// ---- FIX: L0C -> GM / UB --------------------------------------------------------------------------
// Fields the Fixpipe paths here do not use, set so that no field is left uninitialised.
__aicore__ inline AscendC::FixpipeParamsArch3510<> fixpipe_params(uint32_t m, uint32_t n, uint32_t m_pad,
                                                                  uint32_t dst_stride) {
  AscendC::FixpipeParamsArch3510<> p;
  p.mSize = uint16_t(m);
  p.nSize = uint16_t(n);
  p.srcStride = uint16_t(m_pad);
  p.dstStride = dst_stride;
  p.reluScalar = 0;
  p.vectorRelu = 0;
  p.deqScalar = 0;
  return p;
}

template <class D>
__aicore__ inline QuantMode_t fixpipe_cast() {
  if constexpr (AscendC::IsSameType<D, bfloat16_t>::value) return QuantMode_t::F322BF16;
  else if constexpr (AscendC::IsSameType<D, half>::value) return QuantMode_t::F322F16;
  else return QuantMode_t::NoQuant;
}

// The Nz fp32 tile (m x n valid, m_pad rows in L0C) to row-major D, ld values between rows, cast to
// D's type with round to nearest even (§4). With `accumulate`, D += tile (fp32 atomic add in GM).
template <class D>
__aicore__ inline void fixpipe_to_gm(const Gm<D>& d, const Local<float>& l0c, uint32_t m, uint32_t n, uint32_t m_pad,
                                     uint32_t ld, bool accumulate, uint8_t unit_flag = kUnitOff) {
  auto p = fixpipe_params(m, n, m_pad, ld);
  p.quantPre = fixpipe_cast<D>();
  p.unitFlag = unit_flag;
  if (accumulate) AscendC::SetAtomicAdd<D>();
  AscendC::Fixpipe<D, float, AscendC::CFG_ROW_MAJOR>(d, l0c, p);
  if (accumulate) AscendC::SetAtomicNone();
}

// The same tile into the UB of vector core `sub_block` of this core's group, row-major with rows padded
// to 32 B (NZ -> ND to UB needs n * sizeof(float) % 32 == 0), for a vector-side epilogue.
constexpr AscendC::FixpipeConfig kRowMajorToUb = {AscendC::CO2Layout::ROW_MAJOR, true};
__aicore__ inline uint32_t ub_row_values(uint32_t n) {
  constexpr uint32_t kPerC0 = arch::CubeFormat::kC0Bytes / sizeof(float);
  return ceil_div(n, kPerC0) * kPerC0;
}
__aicore__ inline void fixpipe_to_ub(const Local<float>& ub, const Local<float>& l0c, uint32_t m, uint32_t n,
                                     uint32_t m_pad, bool sub_block) {
  const uint32_t row = ub_row_values(n);
  auto p = fixpipe_params(m, row, m_pad, row);
  p.subBlockId = sub_block;
  AscendC::Fixpipe<float, float, kRowMajorToUb>(ub, l0c, p);
}

// The same tile split by rows between the UBs of both vector cores of the group (dual destination,
// split M): rows [0, h) to vector core 0, [h, 2h) to vector core 1, h = arch::vector_split_rows(m), each
// at `ub` with `row` values per row (at least n rounded up to 8; the L0C columns beyond n are the zero
// padding).
__aicore__ inline void fixpipe_to_ub_split(const Local<float>& ub, const Local<float>& l0c, uint32_t m, uint32_t row,
                                           uint32_t m_pad) {
  auto p = fixpipe_params(2 * uint32_t(arch::vector_split_rows(m)), row, m_pad, row);  // m must be even when split
  p.dualDstCtl = 1;
  AscendC::Fixpipe<float, float, kRowMajorToUb>(ub, l0c, p);
}

// ---- events between the pipes of this core: every SetFlag / WaitFlag of the NPU layer is one of these --
template <AscendC::HardEvent E>
__aicore__ inline void set_event(AscendC::TEventID id) { AscendC::SetFlag<E>(id); }
template <AscendC::HardEvent E>
__aicore__ inline void wait_event(AscendC::TEventID id) { AscendC::WaitFlag<E>(id); }

// ---- cross-core flags (AIC <-> AIV of a group) -----------------------------------------------------
constexpr uint8_t kCrossCoreAicAiv = 2;  // mode 2: AIC <-> both AIVs of its group
template <pipe_t P>
__aicore__ inline void cross_core_set(uint16_t id) { AscendC::CrossCoreSetFlag<kCrossCoreAicAiv, P>(id); }
template <pipe_t P>
__aicore__ inline void cross_core_wait(uint16_t id) { AscendC::CrossCoreWaitFlag<kCrossCoreAicAiv, P>(id); }

// Mode 0 on vector cores: all of the launch's (CrossCoreSetFlag(ISASI).md, "模式0": every AIV's set before
// any AIV's wait returns). Each sets the flag once its pipe P has completed what it was given, and P waits
// until all have (modes 0-2 take no PIPE_S).
constexpr uint8_t kCrossCoreAllCores = 0;
constexpr uint16_t kAllVectorCoresBarrier = 8;  // its flag id (apart from the mode-2 ids 0-7)
template <pipe_t P>
__aicore__ inline void all_vector_cores_barrier() {
  AscendC::CrossCoreSetFlag<kCrossCoreAllCores, P>(kAllVectorCoresBarrier);
  AscendC::CrossCoreWaitFlag<kCrossCoreAllCores, P>(kAllVectorCoresBarrier);
}

}  // namespace deepgemm_ascend::tile::npu
