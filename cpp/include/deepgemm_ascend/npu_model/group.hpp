// The NPU instruction model (issue 16), the cores of a group: the 950 pairs one cube core (AIC) with two
// vector cores (AIV0, AIV1), which synchronise through cross-core flags ("CrossCoreSetFlag(ISASI)" /
// "CrossCoreWaitFlag(ISASI)" in the AscendC documentation, docs/zh/api/SIMD-API/基础API/同步控制/核间同步/).
//
// GroupScheduler runs the cores as threads, one at a time (the model's state is the process's), and
// switches only where a core waits for another: a cross-core wait whose flag is not set yet. When every
// core that has not returned is waiting, no wait can ever be satisfied: a deadlock, reported with each
// core's wait; the waits then return (false) so that every core runs to its end.
//
// CrossCoreFlags keeps the mode-2 counters (AIC <-> both AIVs, flag ids 0-15): a set by the AIC counts
// once for each AIV, a wait on an AIV takes one of its counts; a set by an AIV counts for that AIV, and a
// wait on the AIC needs, and takes, one count of each AIV.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
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
  // From core `core`'s thread: waits until ready() holds. `what` names the wait for a deadlock report.
  // False when the group deadlocked (the caller goes on without the flag).
  bool wait_until(int core, const std::function<bool()>& ready, const std::string& what);
  // The deadlock report, empty if none.
  const std::string& deadlock() const { return deadlock_; }

 private:
  enum class State { kRunnable, kWaiting, kDone };
  void pass_from(int core, std::unique_lock<std::mutex>& lock);  // hands control to the next core that can run
  void take(int core, std::unique_lock<std::mutex>& lock);       // waits for control

  std::function<void(int)> on_switch_;
  std::mutex mu_;
  std::condition_variable cv_;
  int current_ = 0;
  std::vector<State> state_;
  std::vector<std::function<bool()>> ready_;
  std::vector<std::string> what_;
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

}  // namespace deepgemm_ascend::npu_model
