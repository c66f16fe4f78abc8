// StageRing<N, Parts>: N equal stages passed from a producer pipe to a consumer pipe. A stage is one
// tile, or with Parts > 1 one tile in each of several buffers that travel together under one pair of
// flags (e.g. the L0A and L0B operands of one Mmad).
//
//   producer: t = acquire();  ...write t...;  commit();
//   consumer: t = consume();  ...read t...;   release();
//
// With Parts == 1, acquire / consume return the tile; otherwise a Stage whose part[i] is the tile in
// the i-th buffer.
//
// acquire waits the stage's "free" flag (consumer -> producer), commit sets its "ready" flag
// (producer -> consumer); consume and release mirror them. The constructor pre-sets every "free"
// flag and the destructor waits them again, so flags stay balanced. Event ids come from the Core.
#pragma once

#include <exception>

#include "deepgemm_ascend/core/error.hpp"

#include "deepgemm_ascend/host/core.hpp"
#include "deepgemm_ascend/tile/ring_stage.hpp"

namespace deepgemm_ascend::tile::host {

template <int N, int Parts = 1>
class StageRing {
  static_assert(N >= 1, "a ring needs at least one stage");
  static_assert(Parts >= 1, "a stage needs at least one buffer");

 public:
  static constexpr int kStages = N;

  StageRing(Core& core, Pos pos, uint32_t stage_bytes, Pipe producer, Pipe consumer, const char* name)
      : StageRing(core, {RingPart{pos, stage_bytes}}, producer, consumer, name) {
    static_assert(Parts == 1, "give one RingPart per buffer");
  }

  StageRing(Core& core, const RingPart (&parts)[Parts], Pipe producer, Pipe consumer, const char* name)
      : core_(core), producer_(producer), consumer_(consumer) {
    for (int i = 0; i < N; ++i) {
      state_[i] = {name, i, Pipe::kNone};
      for (int p = 0; p < Parts; ++p) {
        stages_[i].part[p] = core.alloc(parts[p].pos, parts[p].bytes, name);
        stages_[i].part[p].stage = &state_[i];
      }
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

  decltype(auto) acquire() {
    expect_flag(consumer_, producer_, free_id_[write_], write_, "acquire", "its consumer released it");
    core_.wait_flag(consumer_, producer_, free_id_[write_]);
    state_[write_].owner = producer_;
    return view(write_);
  }
  void commit() {
    state_[write_].owner = Pipe::kNone;
    core_.set_flag(producer_, consumer_, ready_id_[write_]);
    write_ = (write_ + 1) % N;
  }
  decltype(auto) consume() {
    expect_flag(producer_, consumer_, ready_id_[read_], read_, "consume", "its producer committed it");
    core_.wait_flag(producer_, consumer_, ready_id_[read_]);
    state_[read_].owner = consumer_;
    return view(read_);
  }
  void release() {
    state_[read_].owner = Pipe::kNone;
    for (const LocalTile& t : stages_[read_].part) core_.l0_views().drop(t.addr);  // their content is dead
    core_.set_flag(consumer_, producer_, free_id_[read_]);
    read_ = (read_ + 1) % N;
  }

 private:
  decltype(auto) view(int i) const {
    if constexpr (Parts == 1) return (stages_[i].part[0]);
    else return (stages_[i]);
  }

  // Checked mode: names the ring and stage when a wait would never be satisfied.
  void expect_flag(Pipe src, Pipe dst, int id, int stage, const char* op, const char* missing) const {
    if (core_.checked() && !core_.flag_is_set(src, dst, id))
      core_.violation(core::concat(op, " of stage ", stage, " of ring '", state_[stage].ring, "' before ", missing,
                                   " (WaitFlag ", name(src), "->", name(dst), " id ", id, " would deadlock on the NPU)"));
  }

  Core& core_;
  Pipe producer_, consumer_;
  RingStage<LocalTile, Parts> stages_[N];
  StageState state_[N];
  int free_id_[N] = {};
  int ready_id_[N] = {};
  int write_ = 0;
  int read_ = 0;
};

}  // namespace deepgemm_ascend::tile::host
