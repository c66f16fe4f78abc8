// The NPU target's core contexts: the TPipe, one TBuf per on-chip buffer of the core and a bump
// allocator over each, with the Arch tag's capacities and alignments (the host Core's NPU twin).
//   Ctx<Arch>     the cube core: L1, L0A, L0B, L0C (and, WithUb, the UB address space of its vector
//                 cores, which Fixpipe writes to);
//   VecCtx<Arch>  a vector core: its UB.
// Part of the NPU primitive layer; NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/tile/pipe.hpp"

namespace deepgemm_ascend::tile::npu {

// A region of one on-chip buffer: byte offset and size.
struct Tile {
  Pos pos = Pos::kL1;
  uint32_t offset = 0;
  uint32_t bytes = 0;
};

// The LocalTensor index of a byte offset: LocalTensor<T>::operator[] counts values, and a packed 4-bit
// type (fp4x2) holds two values per byte (impl/basic_api/kernel_tensor_impl.h, IsHalfByteDataType).
template <class T>
__aicore__ inline uint32_t index_of(uint32_t byte_offset) {
  constexpr uint32_t kValuesPerHalfByteElement = 2;
  if constexpr (AscendC::IsHalfByteDataType<T>()) return byte_offset * kValuesPerHalfByteElement;
  else return byte_offset / uint32_t(sizeof(T));
}

// Start-address alignment of a buffer position.
template <class Arch>
__aicore__ inline uint32_t pos_align(Pos pos) {
  switch (pos) {
    case Pos::kL0A: return Arch::kL0AAlign;
    case Pos::kL0B: return Arch::kL0BAlign;
    case Pos::kL0C: return Arch::kL0CAlign;
    case Pos::kUB: return Arch::kUBAlign;
    default: return Arch::kL1Align;
  }
}

// Bump allocation per position with the position's start-address rule; the launcher checked the
// config's usage against the Arch tag (heuristics::buffer_usage), so nothing here can overflow.
template <class Arch>
class BumpAlloc {
 public:
  __aicore__ inline Tile alloc(Pos pos, uint32_t bytes) {
    const uint32_t a = pos_align<Arch>(pos);
    const uint32_t start = (top_[int(pos)] + a - 1) / a * a;
    top_[int(pos)] = start + bytes;
    return {pos, start, bytes};
  }

 private:
  uint32_t top_[kNumPos] = {};
};

template <class Arch, bool WithUb = false>
class Ctx : public BumpAlloc<Arch> {
 public:
  __aicore__ inline Ctx() {
    pipe_.InitBuffer(l1_, Arch::kL1Bytes);
    pipe_.InitBuffer(l0a_, Arch::kL0ABytes);
    pipe_.InitBuffer(l0b_, Arch::kL0BBytes);
    pipe_.InitBuffer(l0c_, Arch::kL0CBytes);
    if constexpr (WithUb) pipe_.InitBuffer(ub_, Arch::kUBBytes);
  }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

  __aicore__ inline AscendC::TPipe& pipe() { return pipe_; }

  template <class T>
  __aicore__ inline AscendC::LocalTensor<T> tensor(const Tile& t) {
    const uint32_t at = index_of<T>(t.offset);
    switch (t.pos) {
      case Pos::kL0A: return l0a_.template Get<T>()[at];
      case Pos::kL0B: return l0b_.template Get<T>()[at];
      case Pos::kL0C: return l0c_.template Get<T>()[at];
      case Pos::kUB: return ub_.template Get<T>()[at];
      default: return l1_.template Get<T>()[at];
    }
  }

 private:
  AscendC::TPipe pipe_;
  AscendC::TBuf<AscendC::TPosition::A1> l1_;
  AscendC::TBuf<AscendC::TPosition::A2> l0a_;
  AscendC::TBuf<AscendC::TPosition::B2> l0b_;
  AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> ub_;
};

template <class Arch>
class VecCtx : public BumpAlloc<Arch> {
 public:
  __aicore__ inline VecCtx() { pipe_.InitBuffer(ub_, Arch::kUBBytes); }
  VecCtx(const VecCtx&) = delete;
  VecCtx& operator=(const VecCtx&) = delete;

  __aicore__ inline AscendC::TPipe& pipe() { return pipe_; }
  template <class T>
  __aicore__ inline AscendC::LocalTensor<T> tensor(const Tile& t) {
    return ub_.template Get<T>()[index_of<T>(t.offset)];
  }
  // The UB address of `t`, for register code (Reg API loads and stores).
  template <class T>
  __aicore__ inline __ubuf__ T* ub(const Tile& t) {
    return reinterpret_cast<__ubuf__ T*>(tensor<T>(t).GetPhyAddr());
  }

 private:
  AscendC::TPipe pipe_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> ub_;
};

}  // namespace deepgemm_ascend::tile::npu
