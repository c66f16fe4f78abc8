// The NPU target's core context: the TPipe, one TBuf per on-chip buffer of the cube core and a bump
// allocator over each, with the Arch tag's capacities and alignments (the host Core's NPU twin).
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

template <class Arch>
class Ctx {
 public:
  __aicore__ inline Ctx() {
    pipe_.InitBuffer(l1_, Arch::kL1Bytes);
    pipe_.InitBuffer(l0a_, Arch::kL0ABytes);
    pipe_.InitBuffer(l0b_, Arch::kL0BBytes);
    pipe_.InitBuffer(l0c_, Arch::kL0CBytes);
  }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

  __aicore__ inline AscendC::TPipe& pipe() { return pipe_; }

  // Bump allocation with the buffer's start-address rule; the launcher checked the config's usage
  // against the Arch tag (heuristics::buffer_usage), so nothing here can overflow.
  __aicore__ inline Tile alloc(Pos pos, uint32_t bytes) {
    const uint32_t a = align(pos);
    const uint32_t start = (top_[int(pos)] + a - 1) / a * a;
    top_[int(pos)] = start + bytes;
    return {pos, start, bytes};
  }

  template <class T>
  __aicore__ inline AscendC::LocalTensor<T> tensor(const Tile& t) {
    const uint32_t at = t.offset / uint32_t(sizeof(T));
    switch (t.pos) {
      case Pos::kL0A: return l0a_.template Get<T>()[at];
      case Pos::kL0B: return l0b_.template Get<T>()[at];
      case Pos::kL0C: return l0c_.template Get<T>()[at];
      default: return l1_.template Get<T>()[at];
    }
  }

 private:
  __aicore__ static inline uint32_t align(Pos pos) {
    switch (pos) {
      case Pos::kL0A: return Arch::kL0AAlign;
      case Pos::kL0B: return Arch::kL0BAlign;
      case Pos::kL0C: return Arch::kL0CAlign;
      case Pos::kUB: return Arch::kUBAlign;
      default: return Arch::kL1Align;
    }
  }

  AscendC::TPipe pipe_;
  AscendC::TBuf<AscendC::TPosition::A1> l1_;
  AscendC::TBuf<AscendC::TPosition::A2> l0a_;
  AscendC::TBuf<AscendC::TPosition::B2> l0b_;
  AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
  uint32_t top_[kNumPos] = {};
};

}  // namespace deepgemm_ascend::tile::npu
