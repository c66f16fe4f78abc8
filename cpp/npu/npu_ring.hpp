// The NPU target's stage ring: the host StageRing's protocol over AscendC events. Event ids come from
// the TPipe (AllocEventID), so none collides with the ids the TPipe itself holds (on the cube core it
// sets M_MTE1 ids 0-2 at construction and waits them in Destroy); every flag the ring sets it waits
// again before it is destroyed, and its ids go back to the pipe. Part of the NPU primitive layer.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/tile/pipe.hpp"
#include "deepgemm_ascend/tile/ring_stage.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"

namespace deepgemm_ascend::tile::npu {

// The AscendC event type of a flag from pipe `src` to pipe `dst`.
__aicore__ constexpr AscendC::HardEvent hard_event(Pipe src, Pipe dst) {
  using E = AscendC::HardEvent;
  return src == Pipe::kMTE2 && dst == Pipe::kMTE1   ? E::MTE2_MTE1
         : src == Pipe::kMTE1 && dst == Pipe::kMTE2 ? E::MTE1_MTE2
         : src == Pipe::kMTE1 && dst == Pipe::kM    ? E::MTE1_M
         : src == Pipe::kM && dst == Pipe::kMTE1    ? E::M_MTE1
         : src == Pipe::kM && dst == Pipe::kFIX     ? E::M_FIX
         : src == Pipe::kFIX && dst == Pipe::kM     ? E::FIX_M
         : src == Pipe::kMTE2 && dst == Pipe::kV    ? E::MTE2_V
         : src == Pipe::kV && dst == Pipe::kMTE2    ? E::V_MTE2
         : src == Pipe::kV && dst == Pipe::kMTE3    ? E::V_MTE3
         : src == Pipe::kMTE3 && dst == Pipe::kV    ? E::MTE3_V
         : src == Pipe::kMTE2 && dst == Pipe::kMTE3 ? E::MTE2_MTE3
         : src == Pipe::kMTE3 && dst == Pipe::kMTE2 ? E::MTE3_MTE2
                                                    : E::MAX;
}

template <int N, Pipe Producer, Pipe Consumer, int Parts = 1>
class Ring {
  static constexpr AscendC::HardEvent kReady = hard_event(Producer, Consumer);
  static constexpr AscendC::HardEvent kFree = hard_event(Consumer, Producer);
  static_assert(kReady != AscendC::HardEvent::MAX && kFree != AscendC::HardEvent::MAX,
                "no AscendC event type between these pipes");
  static_assert(N >= 1 && Parts >= 1, "a ring needs a stage and a buffer");
  // One event id of each of its two types per stage; a core has eight of each type (SetFlag-WaitFlag(ISASI).md).
  static_assert(N <= 8, "at most eight stages");

 public:
  static constexpr int kStages = N;

  template <class C>  // Ctx or VecCtx
  __aicore__ inline Ring(C& ctx, const RingPart (&parts)[Parts], const char* /*name*/) : pipe_(ctx.pipe()) {
    for (int i = 0; i < N; ++i) {
      for (int p = 0; p < Parts; ++p) stages_[i].part[p] = ctx.alloc(parts[p].pos, parts[p].bytes);
      free_[i] = pipe_.template AllocEventID<kFree>();
      ready_[i] = pipe_.template AllocEventID<kReady>();
      set_event<kFree>(free_[i]);
    }
  }
  __aicore__ inline ~Ring() {
    for (int i = 0; i < N; ++i) {
      wait_event<kFree>(free_[i]);
      pipe_.template ReleaseEventID<kFree>(free_[i]);
      pipe_.template ReleaseEventID<kReady>(ready_[i]);
    }
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  __aicore__ inline decltype(auto) acquire() {
    wait_event<kFree>(free_[write_]);
    return view(write_);
  }
  __aicore__ inline void commit() {
    set_event<kReady>(ready_[write_]);
    write_ = (write_ + 1) % N;
  }
  __aicore__ inline decltype(auto) consume() {
    wait_event<kReady>(ready_[read_]);
    return view(read_);
  }
  __aicore__ inline void release() {
    set_event<kFree>(free_[read_]);
    read_ = (read_ + 1) % N;
  }

 private:
  __aicore__ inline decltype(auto) view(int i) const {
    if constexpr (Parts == 1) return (stages_[i].part[0]);
    else return (stages_[i]);
  }

  AscendC::TPipe& pipe_;
  RingStage<Tile, Parts> stages_[N];
  AscendC::TEventID free_[N] = {};
  AscendC::TEventID ready_[N] = {};
  int write_ = 0;
  int read_ = 0;
};

}  // namespace deepgemm_ascend::tile::npu
