#include "deepgemm_ascend/runtime/host_peak.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::runtime {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRounds = 5;
constexpr int64_t kProbeIters = 1 << 12;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

HostPeak measure_host_peak(double budget_s) {
  const auto start = Clock::now();
  const tile::host::PeakLoopFn loop = tile::host::peak_loop_fn();
  HostBackend& backend = host_backend();
  HostPeak peak;
  peak.isa = tile::host::name(tile::host::active_host_isa());
  peak.cores = backend.num_ai_cores();
  // One core's speed sizes the rounds: each round takes about budget / rounds.
  auto probe = Clock::now();
  loop(kProbeIters);
  const double per_iter = std::max(since(probe), 1e-9) / double(kProbeIters);
  const int64_t iters = std::max<int64_t>(kProbeIters, int64_t(budget_s / kRounds / per_iter));
  for (int r = 0; r < kRounds; ++r) {
    std::atomic<double> flop{0.0};
    const auto t = Clock::now();
    backend.launch("host_peak", peak.cores, [&](tile::host::Core&) {
      const double f = loop(iters);
      double cur = flop.load();
      while (!flop.compare_exchange_weak(cur, cur + f)) {
      }
    });
    peak.tflops = std::max(peak.tflops, flop.load() / since(t) / 1e12);
  }
  peak.seconds = since(start);
  return peak;
}

}  // namespace deepgemm_ascend::runtime
