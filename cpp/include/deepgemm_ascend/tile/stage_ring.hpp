// StageRing<N>: N equal stages of one buffer passed from a producer pipe to a consumer pipe.
//
//   producer: t = acquire();  ...write t...;  commit();
//   consumer: t = consume();  ...read t...;   release();
//
// acquire waits the stage's "free" flag (consumer -> producer), commit sets its "ready" flag
// (producer -> consumer); consume and release mirror them. The constructor pre-sets every "free"
// flag and the destructor waits them again, so flags stay balanced. Event ids come from the Core.
#pragma once

#include <exception>

#include "deepgemm_ascend/core/error.hpp"

#include "deepgemm_ascend/tile/core.hpp"

namespace deepgemm_ascend::tile {

template <int N>
class StageRing {
  static_assert(N >= 1, "a ring needs at least one stage");

 public:
  StageRing(Core& core, Pos pos, uint32_t stage_bytes, Pipe producer, Pipe consumer, const char* name)
      : core_(core), producer_(producer), consumer_(consumer) {
    for (int i = 0; i < N; ++i) {
      state_[i] = {name, i, Pipe::kNone};
      tiles_[i] = core.alloc(pos, stage_bytes, name);
      tiles_[i].stage = &state_[i];
      free_id_[i] = core.alloc_event_id(consumer, producer, name);
      ready_id_[i] = core.alloc_event_id(producer, consumer, name);
      core.set_flag(consumer_, producer_, free_id_[i]);
    }
  }

  ~StageRing() {
    for (int i = 0; i < N; ++i) {
      if (!std::uncaught_exceptions()) {
        if (core_.checked() && !core_.flag_is_set(consumer_, producer_, free_id_[i]))
          core_.defer_violation(core::concat("tile machine: kernel '", core_.kernel(), "' block ", core_.block_idx(),
                                             ": ring '", state_[i].ring, "' destroyed while its stage ", i,
                                             " was not released (its WaitFlag would deadlock on the NPU)"));
        else
          core_.wait_flag(consumer_, producer_, free_id_[i]);
      }
      core_.free_event_id(producer_, consumer_, ready_id_[i]);
      core_.free_event_id(consumer_, producer_, free_id_[i]);
    }
  }

  StageRing(const StageRing&) = delete;
  StageRing& operator=(const StageRing&) = delete;

  const LocalTile& acquire() {
    expect_flag(consumer_, producer_, free_id_[write_], write_, "acquire", "its consumer released it");
    core_.wait_flag(consumer_, producer_, free_id_[write_]);
    state_[write_].owner = producer_;
    return tiles_[write_];
  }
  void commit() {
    state_[write_].owner = Pipe::kNone;
    core_.set_flag(producer_, consumer_, ready_id_[write_]);
    write_ = (write_ + 1) % N;
  }
  const LocalTile& consume() {
    expect_flag(producer_, consumer_, ready_id_[read_], read_, "consume", "its producer committed it");
    core_.wait_flag(producer_, consumer_, ready_id_[read_]);
    state_[read_].owner = consumer_;
    return tiles_[read_];
  }
  void release() {
    state_[read_].owner = Pipe::kNone;
    core_.set_flag(consumer_, producer_, free_id_[read_]);
    read_ = (read_ + 1) % N;
  }

 private:
  // Checked mode: names the ring and stage when a wait would never be satisfied.
  void expect_flag(Pipe src, Pipe dst, int id, int stage, const char* op, const char* missing) const {
    if (core_.checked() && !core_.flag_is_set(src, dst, id))
      core_.violation(core::concat(op, " of stage ", stage, " of ring '", state_[stage].ring, "' before ", missing,
                                   " (WaitFlag ", name(src), "->", name(dst), " id ", id, " would deadlock on the NPU)"));
  }

  Core& core_;
  Pipe producer_, consumer_;
  LocalTile tiles_[N];
  StageState state_[N];
  int free_id_[N] = {};
  int ready_id_[N] = {};
  int write_ = 0;
  int read_ = 0;
};

}  // namespace deepgemm_ascend::tile
