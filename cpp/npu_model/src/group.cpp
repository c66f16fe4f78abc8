#include "deepgemm_ascend/npu_model/group.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

GroupScheduler::GroupScheduler(int cores, std::function<void(int)> on_switch)
    : on_switch_(std::move(on_switch)), cvs_(size_t(cores)), state_(size_t(cores), State::kRunnable),
      ready_(size_t(cores)), what_(size_t(cores)), clock_(size_t(cores), 0.0) {}

void GroupScheduler::use_epochs(double step) {
  DGA_REQUIRE(step > 0, kValue, "step", "an epoch must last a positive number of cycles");
  step_ = step, epoch_ = step;
}

void GroupScheduler::hand_to(int core) {
  current_ = core;
  cvs_[size_t(core)].notify_one();
}

void GroupScheduler::take(int core, std::unique_lock<std::mutex>& lock) {
  cvs_[size_t(core)].wait(lock, [&] { return current_ == core; });
  state_[size_t(core)] = State::kRunnable;
  on_switch_(core);
}

void GroupScheduler::pass_from(int core, std::unique_lock<std::mutex>&) {
  const int n = int(state_.size());
  for (int step = 1; step <= n; ++step) {
    const int next = (core + step) % n;
    const State s = state_[size_t(next)];
    if (s == State::kRunnable || (s == State::kWaiting && (ready_[size_t(next)]() || !deadlock_.empty()))) {
      hand_to(next);
      return;
    }
  }
  // Nobody can run before the epoch: the cores at it go on into the next one.
  if (advance_epoch()) return;
  // Nobody can run: every core left is waiting for a flag no core will set.
  bool any = false;
  for (int c = 0; c < n; ++c)
    if (state_[size_t(c)] == State::kWaiting) {
      deadlock_ += (any ? "; " : "") + what_[size_t(c)];
      any = true;
    }
  if (!any) return;  // every core has returned
  for (int step = 0; step < n; ++step) {
    const int next = (core + step) % n;
    if (state_[size_t(next)] == State::kWaiting) {
      hand_to(next);
      return;
    }
  }
}

bool GroupScheduler::advance_epoch() {
  const int n = int(state_.size());
  double earliest = -1;
  for (int c = 0; c < n; ++c)
    if (state_[size_t(c)] == State::kAtEpoch && (earliest < 0 || clock_[size_t(c)] < earliest)) earliest = clock_[size_t(c)];
  if (earliest < 0) return false;
  // The first whole step past the earliest core at the epoch (cores may jump ahead, after a wait).
  epoch_ = std::max(epoch_ + step_, (std::floor(earliest / step_) + 1) * step_);
  for (int c = 0; c < n; ++c)
    if (state_[size_t(c)] == State::kAtEpoch && clock_[size_t(c)] < epoch_) state_[size_t(c)] = State::kRunnable;
  // Each epoch starts at another core, so that no core claims the shared bandwidth first every time.
  const int from = int(advances_++ % uint64_t(n));
  for (int step = 0; step < n; ++step) {
    const int next = (from + step) % n;
    if (state_[size_t(next)] == State::kRunnable) {
      hand_to(next);
      return true;
    }
  }
  return false;  // unreachable: the earliest core is runnable
}

void GroupScheduler::yield_at_epoch(int core, double cycle) {
  std::unique_lock<std::mutex> lock(mu_);
  state_[size_t(core)] = State::kAtEpoch;
  clock_[size_t(core)] = cycle;
  pass_from(core, lock);
  take(core, lock);
}

bool GroupScheduler::wait_until(int core, const std::function<bool()>& ready, const std::string& what) {
  if (ready()) return true;
  if (!deadlock_.empty()) return false;
  std::unique_lock<std::mutex> lock(mu_);
  state_[size_t(core)] = State::kWaiting;
  ready_[size_t(core)] = ready;
  what_[size_t(core)] = what;
  pass_from(core, lock);
  take(core, lock);
  return ready() && deadlock_.empty();
}

void GroupScheduler::run(const std::function<void(int)>& body, int first) {
  const int n = int(state_.size());
  current_ = first;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int c = 0; c < n; ++c)
    threads.emplace_back([&, c] {
      std::unique_lock<std::mutex> lock(mu_);
      take(c, lock);
      lock.unlock();
      try {
        body(c);
      } catch (...) {
        errors[size_t(c)] = std::current_exception();
      }
      lock.lock();
      state_[size_t(c)] = State::kDone;
      pass_from(c, lock);
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

std::string CrossCoreFlags::set(int sub, int id) {
  if (id < 0 || id >= kIds) return "flag id " + std::to_string(id) + " is outside 0-15 (modes 0-2)";
  for (int v = 0; v < kVectorCores; ++v) {
    if (sub >= 0 && v != sub) continue;
    int& count = sub < 0 ? to_aiv_[size_t(v)][size_t(id)] : from_aiv_[size_t(v)][size_t(id)];
    if (count == kMaxCount) return "flag id " + std::to_string(id) + " set more than 15 times without a wait";
    ++count;
  }
  return {};
}

bool CrossCoreFlags::can_wait(int sub, int id) const {
  if (id < 0 || id >= kIds) return false;
  if (sub >= 0) return to_aiv_[size_t(sub)][size_t(id)] > 0;
  for (int v = 0; v < kVectorCores; ++v)
    if (from_aiv_[size_t(v)][size_t(id)] == 0) return false;
  return true;
}

void CrossCoreFlags::take(int sub, int id) {
  if (sub >= 0) {
    --to_aiv_[size_t(sub)][size_t(id)];
    return;
  }
  for (int v = 0; v < kVectorCores; ++v) --from_aiv_[size_t(v)][size_t(id)];
}

std::vector<std::string> CrossCoreFlags::left_set() const {
  std::vector<std::string> out;
  for (int v = 0; v < kVectorCores; ++v)
    for (int id = 0; id < kIds; ++id) {
      const std::string aiv = "AIV" + std::to_string(v), tail = " id " + std::to_string(id);
      if (to_aiv_[size_t(v)][size_t(id)] > 0) out.push_back("AIC -> " + aiv + tail);
      if (from_aiv_[size_t(v)][size_t(id)] > 0) out.push_back(aiv + " -> AIC" + tail);
    }
  return out;
}

std::string BarrierFlags::set(int core, int id) {
  if (id < 0 || id >= kIds) return "flag id " + std::to_string(id) + " is outside 0-15 (modes 0-2)";
  if (arrived_[size_t(core)][size_t(id)])
    return "flag id " + std::to_string(id) + " set again before every participating core has set it";
  arrived_[size_t(core)][size_t(id)] = true;
  for (const auto& a : arrived_)
    if (!a[size_t(id)]) return {};
  for (auto& a : arrived_) a[size_t(id)] = false;
  for (auto& c : count_) {
    if (c[size_t(id)] == kMaxCount) return "flag id " + std::to_string(id) + " counts a 16th time without a wait";
    ++c[size_t(id)];
  }
  return {};
}

std::vector<std::string> BarrierFlags::left_set(const std::function<std::string(int)>& name) const {
  std::vector<std::string> out;
  for (size_t c = 0; c < count_.size(); ++c)
    for (int id = 0; id < kIds; ++id) {
      if (count_[c][size_t(id)] > 0) out.push_back(name(int(c)) + " id " + std::to_string(id) + " (not waited)");
      if (arrived_[c][size_t(id)])
        out.push_back(name(int(c)) + " id " + std::to_string(id) + " (set, but not by every participating core)");
    }
  return out;
}

std::string IntraBlockFlags::check_id(int sub, int id) {
  const int ids = sub < 0 ? kAicIds : kAivIds;
  if (id >= 0 && id < ids) return {};
  return "flag id " + std::to_string(id) + " is outside " + (sub < 0 ? "the AIC's 0-31" : "an AIV's 0-15") +
         " (mode 4)";
}

std::string IntraBlockFlags::set(int sub, int id) {
  if (std::string err = check_id(sub, id); !err.empty()) return err;
  const Target t = target(sub, id);
  int& c = count(t.sub, t.id);
  if (c == kMaxCount)
    return "flag id " + std::to_string(id) + " set 16 times without a wait (mode 4: a 4-bit counter)";
  ++c;
  return {};
}

std::vector<std::string> IntraBlockFlags::left_set() const {
  std::vector<std::string> out;
  for (int v = 0; v < kVectorCores; ++v)
    for (int id = 0; id < kAivIds; ++id) {
      const std::string aiv = "AIV" + std::to_string(v);
      if (count(v, id) > 0) out.push_back("AIC -> " + aiv + " id " + std::to_string(id));
      if (count(-1, id + kAivIds * v) > 0) out.push_back(aiv + " -> AIC id " + std::to_string(id + kAivIds * v));
    }
  return out;
}

}  // namespace deepgemm_ascend::npu_model
