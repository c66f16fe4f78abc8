#include "deepgemm_ascend/runtime/host_peak.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/cpu_features.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::runtime {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRounds = 5;
constexpr int64_t kProbeIters = 1 << 12;
// The FMA width race: rounds of about 0.15 ms per loop (10 or 12 chains x 2^16 iterations), the best of each.
constexpr int kRaceRounds = 8;
constexpr int64_t kRaceIters = 1 << 16;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

const FmaWidthRace& fma_width_race() {
  static const FmaWidthRace race = [] {
    FmaWidthRace r;
#if DGA_HOST_X86
    if (!host_isa_runs(HostIsa::kAvx512) || !host_isa_runs(HostIsa::kAvx2)) return r;
    auto rate = [](tile::host::PeakLoopFn loop) {
      const auto t = Clock::now();
      const double flop = loop(kRaceIters);
      return flop / std::max(since(t), 1e-9);
    };
    // Alternating short rounds, the best of each: a busy moment of the machine (a neighbour on a shared host)
    // lowers single rounds of either side, not one side's whole measurement. Between AVX-512 rounds the AVX2
    // loop may run at the lower AVX-512 clock too; both at one clock, a part with one 512-bit FMA unit measures
    // about 1x (below the threshold) and one with two about 2x.
    tile::host::peak_loop_avx2(kRaceIters);
    tile::host::peak_loop_avx512(kRaceIters);
    for (int i = 0; i < kRaceRounds; ++i) {
      r.avx2 = std::max(r.avx2, rate(&tile::host::peak_loop_avx2));
      r.avx512 = std::max(r.avx512, rate(&tile::host::peak_loop_avx512));
    }
#endif
    return r;
  }();
  return race;
}

HostPeak measure_host_peak(double budget_s) {
  const auto start = Clock::now();
  const tile::host::PeakLoopFn loop = tile::host::peak_loop_fn();
  HostBackend& backend = host_backend();
  HostPeak peak;
  peak.isa = name(active_host_isa());
  peak.cores = backend.num_ai_cores();
  // One core's speed sizes the rounds: each round takes about budget / rounds.
  auto probe = Clock::now();
  loop(kProbeIters);
  const double per_iter = std::max(since(probe), 1e-9) / double(kProbeIters);
  const int64_t iters = std::max<int64_t>(kProbeIters, int64_t(budget_s / kRounds / per_iter));
  for (int r = 0; r < kRounds; ++r) {
    std::atomic<double> flop{0.0};
    const auto t = Clock::now();
    backend.launch("host_peak", peak.cores, [&](tile::Core&) {
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
