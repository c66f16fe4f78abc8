#include "deepgemm_ascend/comm/peer_group.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::comm {

namespace {

constexpr double kDefaultTimeoutS = 100.0;
constexpr int kSpinsBeforeYield = 256;
constexpr auto kSleep = std::chrono::microseconds(50);
constexpr auto kLivenessPeriod = std::chrono::milliseconds(20);
constexpr int kBarriersPerCall = 4;

uint64_t load(const uint64_t& v) { return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(v)).load(std::memory_order_acquire); }
void store(uint64_t& v, uint64_t x) { std::atomic_ref<uint64_t>(v).store(x, std::memory_order_release); }

double env_timeout() {
  const char* s = std::getenv("DGA_COMM_TIMEOUT_S");
  if (!s || !*s) return kDefaultTimeoutS;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  DGA_REQUIRE(end && *end == '\0' && v > 0, kValue, "DGA_COMM_TIMEOUT_S", "expected a positive number of seconds, got '",
              s, "'");
  return v;
}

bool process_alive(int64_t pid) { return pid <= 0 || ::kill(pid_t(pid), 0) == 0 || errno != ESRCH; }

}  // namespace

PeerGroup::PeerGroup(std::vector<uint8_t*> bases, int rank, uint64_t layout_hash, double timeout_s)
    : bases_(std::move(bases)), rank_(rank), hash_(layout_hash), timeout_s_(timeout_s > 0 ? timeout_s : env_timeout()) {
  DGA_REQUIRE(!bases_.empty() && rank_ >= 0 && rank_ < size(), kValue, "rank", "must be in [0, ", size(), "), got ",
              rank_);
  for (int r = 0; r < size(); ++r)
    DGA_REQUIRE(bases_[size_t(r)] != nullptr, kValue, "buffer_ptrs", "rank ", r, "'s buffer pointer is null");
}

void PeerGroup::register_process(uint8_t* base) {
  auto& h = *reinterpret_cast<PeerHeader*>(base);
  h.pid = int64_t(::getpid());
  h.magic = kMagic;
}

uint64_t PeerGroup::epoch(int index) const { return header(rank_).calls * kBarriersPerCall + uint64_t(index); }

void PeerGroup::begin_call(int64_t num_tokens) {
  PeerHeader& me = header(rank_);
  me.magic = kMagic;
  me.layout_hash = hash_;
  me.pid = int64_t(::getpid());
  me.num_tokens = num_tokens;
  me.calls += 1;  // only this rank writes its header; published by the first barrier's release store
}

void PeerGroup::peer_failed(int peer, const char* what, const std::string& why) const {
  core::fail(core::ErrorKind::kRuntime, "sym_buffer", "rank ", rank_, " stopped at barrier '", what, "' because rank ",
             peer, " ", why);
}

void PeerGroup::barrier(int index, const char* what) {
  const uint64_t e = epoch(index);
  store(header(rank_).arrived, e);
  const auto start = std::chrono::steady_clock::now();
  auto next_check = start;
  for (int r = 0; r < size(); ++r) {
    if (r == rank_) continue;
    const PeerHeader& p = header(r);
    for (int spin = 0; load(p.arrived) < e; ++spin) {
      if (load(p.aborted)) peer_failed(r, what, std::string("failed: ") + std::string(p.reason, strnlen(p.reason, sizeof p.reason)));
      if (spin < kSpinsBeforeYield) continue;
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_check) {
        next_check = now + kLivenessPeriod;
        if (!process_alive(p.pid)) peer_failed(r, what, "(pid " + std::to_string(p.pid) + ") has exited");
        if (std::chrono::duration<double>(now - start).count() > timeout_s_)
          peer_failed(r, what, "did not arrive within " + std::to_string(timeout_s_) +
                                   " s (DGA_COMM_TIMEOUT_S); is every rank calling with the same buffer?");
      }
      std::this_thread::sleep_for(kSleep);
    }
    DGA_REQUIRE(p.magic == kMagic && p.layout_hash == hash_, kValue, "sym_buffer", "rank ", r,
                "'s buffer has a different layout (created with other sizes or mma_type)");
  }
}

void PeerGroup::abort(const std::string& reason) noexcept {
  PeerHeader& me = header(rank_);
  const size_t n = std::min(reason.size(), sizeof me.reason - 1);
  std::memcpy(me.reason, reason.data(), n);
  me.reason[n] = '\0';
  store(me.aborted, 1);
}

}  // namespace deepgemm_ascend::comm
