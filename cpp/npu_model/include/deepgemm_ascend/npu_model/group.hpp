// The NPU instruction model, the cores of a group: the 950 pairs one cube core (AIC) with two
// vector cores (AIV0, AIV1), which synchronise through cross-core flags ("CrossCoreSetFlag(ISASI)" /
// "CrossCoreWaitFlag(ISASI)" in the AscendC documentation, docs/zh/api/SIMD-API/基础API/同步控制/核间同步/).
//
// GroupScheduler runs the cores as threads, one at a time (the model's state is the process's), and
// switches where a core waits for another: a cross-core wait whose flag is not set yet (a switch wakes the
// thread of the core it hands control to, no other). With epochs on (the timing mode: use_epochs), a core
// also hands over once the start cycle of its latest instruction reaches the current epoch (at_cycle), so
// that the cores of a launch advance through simulated time together and claim the shared memory system's
// bandwidth roughly in time order; when no core can run but some are at the epoch, the epoch advances past
// the earliest of them and those below it run again (from a core that rotates each epoch). When every core
// that has not returned is waiting and none is at the epoch, no wait can ever be satisfied: a deadlock,
// reported with each core's wait; the waits then return (false) so that every core runs to its end.
//
// CrossCoreFlags keeps the mode-2 counters (AIC <-> both AIVs, flag ids 0-15): a set by the AIC counts
// once for each AIV, a wait on an AIV takes one of its counts; a set by an AIV counts for that AIV, and a
// wait on the AIC needs, and takes, one count of each AIV.
//
// BarrierFlags keeps the counters of modes 0 and 1 (flag ids 0-15): mode 0 syncs every AIV of the launch
// (or every AIC), mode 1 the two AIVs of a group. A set by a participating core is its arrival; once every
// participant has arrived on an id, the arrivals are consumed and each participant's counter for that id
// counts one, which its wait takes. A second set by a core before every participant has arrived is refused
// (the page does not say what it does), and so is a 16th count.
//
// IntraBlockFlags keeps the mode-4 counters (the 950's AIC <-> one AIV, CrossCoreSetFlag / CrossCoreWaitFlag
// with modeId 4, which the devkit issues as set_intra_block / wait_intra_block; "asc_sync_intra_arrive" and
// "asc_sync_intra_wait" in docs/zh/api/SIMD-API/C-API/sync/): the AIC has 32 flag ids, each AIV 16. A set by
// the AIC on id 0-15 counts for AIV0's id, on 16-31 for AIV1's id - 16; a set by AIV v on id counts for the
// AIC's id + 16 v. A wait takes one count of its own core's id. Each counter has 4 bits (0-15): a 16th count
// is an error. Mode 4's flags are independent of modes 0-2.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace deepgemm_ascend::npu_model {

class GroupScheduler {
 public:
  // on_switch(core) runs on a core's thread each time it (re)gains control, before its code continues.
  GroupScheduler(int cores, std::function<void(int)> on_switch);

  // Runs body(core) for every core, core `first` first; returns when all have returned. Exceptions
  // escaping a body are rethrown (the first one) after every core has returned.
  void run(const std::function<void(int)>& body, int first = 0);
  // Turns epochs on (before run): the first epoch ends at cycle `step`, each advance adds whole steps.
  void use_epochs(double step);
  bool epochs() const { return step_ > 0; }
  // From core `core`'s thread, after an instruction that started at `cycle`: hands over when the cycle has
  // reached the current epoch, returns once the core may go on.
  void at_cycle(int core, double cycle) {
    if (step_ > 0 && cycle >= epoch_) yield_at_epoch(core, cycle);
  }
  // From core `core`'s thread: waits until ready() holds. `what` names the wait for a deadlock report.
  // False when the group deadlocked (the caller goes on without the flag).
  bool wait_until(int core, const std::function<bool()>& ready, const std::string& what);
  // The deadlock report, empty if none.
  const std::string& deadlock() const { return deadlock_; }

 private:
  enum class State { kRunnable, kWaiting, kAtEpoch, kDone };
  void pass_from(int core, std::unique_lock<std::mutex>& lock);  // hands control to the next core that can run
  bool advance_epoch();  // the next epoch when some core is at this one; false when none is
  void yield_at_epoch(int core, double cycle);
  void take(int core, std::unique_lock<std::mutex>& lock);       // waits for control
  void hand_to(int core);                                         // makes `core` current and wakes it

  std::function<void(int)> on_switch_;
  std::mutex mu_;
  std::deque<std::condition_variable> cvs_;  // one per core: a switch wakes the core it hands control to
  int current_ = 0;
  std::vector<State> state_;
  std::vector<std::function<bool()>> ready_;
  std::vector<std::string> what_;
  std::vector<double> clock_;  // a core at the epoch: the start cycle of its latest instruction
  double step_ = 0, epoch_ = 0;
  uint64_t advances_ = 0;
  std::string deadlock_;
};

class CrossCoreFlags {
 public:
  static constexpr int kIds = 16;
  static constexpr int kVectorCores = 2;
  static constexpr int kMaxCount = 15;  // [assumed] a 4-bit counter per flag id and direction

  // sub: -1 for the AIC, else the AIV's index. Returns an error message, empty if none.
  std::string set(int sub, int id);
  bool can_wait(int sub, int id) const;
  void take(int sub, int id);
  // Counts still set when the kernel returns, as "AIC -> AIV0 id 3" lines.
  std::vector<std::string> left_set() const;

 private:
  std::array<std::array<int, kIds>, kVectorCores> to_aiv_{};    // set by the AIC, for AIV v
  std::array<std::array<int, kIds>, kVectorCores> from_aiv_{};  // set by AIV v, for the AIC
};

class BarrierFlags {
 public:
  static constexpr int kIds = 16;
  static constexpr int kMaxCount = 15;  // a counter counts 0-15 (CrossCoreSetFlag: flagId constraints)
  explicit BarrierFlags(int cores) : arrived_(size_t(cores)), count_(size_t(cores)) {}
  // core: the participant's index. Returns an error message, empty if none.
  std::string set(int core, int id);
  bool can_wait(int core, int id) const { return id >= 0 && id < kIds && count_[size_t(core)][size_t(id)] > 0; }
  void take(int core, int id) { --count_[size_t(core)][size_t(id)]; }
  int count(int core, int id) const { return id >= 0 && id < kIds ? count_[size_t(core)][size_t(id)] : 0; }
  // Counts not waited and arrivals whose round never completed when the kernel returns, as
  // "<name(core)> id 3" lines.
  std::vector<std::string> left_set(const std::function<std::string(int)>& name) const;

 private:
  std::vector<std::array<bool, kIds>> arrived_;
  std::vector<std::array<int, kIds>> count_;
};

class IntraBlockFlags {
 public:
  static constexpr int kAicIds = 32;
  static constexpr int kAivIds = 16;
  static constexpr int kVectorCores = 2;
  static constexpr int kMaxCount = 15;  // a 4-bit counter

  // The core a flag set by core `sub` (-1 the AIC, else the AIV's index) on `id` counts for: the AIV's index,
  // or -1 for the AIC; and the id it counts under there.
  struct Target {
    int sub;
    int id;
  };
  static Target target(int sub, int id) {
    return sub < 0 ? Target{id / kAivIds, id % kAivIds} : Target{-1, id + kAivIds * sub};
  }
  // An error message for an id outside the core's range, empty if none.
  static std::string check_id(int sub, int id);

  // Returns an error message, empty if none.
  std::string set(int sub, int id);
  bool can_wait(int sub, int id) const { return count(sub, id) > 0; }
  void take(int sub, int id) { --count(sub, id); }
  // Counts still set when the kernel returns, as "AIC -> AIV0 id 3" / "AIV1 -> AIC id 19" lines.
  std::vector<std::string> left_set() const;

 private:
  int& count(int sub, int id) { return sub < 0 ? aic_[size_t(id)] : aiv_[size_t(sub)][size_t(id)]; }
  int count(int sub, int id) const { return sub < 0 ? aic_[size_t(id)] : aiv_[size_t(sub)][size_t(id)]; }

  std::array<int, kAicIds> aic_{};                            // the AIC's counters
  std::array<std::array<int, kAivIds>, kVectorCores> aiv_{};  // each AIV's counters
};

}  // namespace deepgemm_ascend::npu_model
