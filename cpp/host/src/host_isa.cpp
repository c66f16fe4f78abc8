#include "deepgemm_ascend/host/host_isa.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/core/cpu_features.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {
// Every host ISA, best first: the order supported_host_isas() keeps.
constexpr HostIsa kHostIsasBestFirst[] = {HostIsa::kAmxBf16, HostIsa::kAvx512Bf16, HostIsa::kAvx512, HostIsa::kAvx2,
                                          HostIsa::kScalar};
}  // namespace

const char* name(HostIsa isa) {
  switch (isa) {
    case HostIsa::kScalar: return "scalar";
    case HostIsa::kAvx2: return "avx2";
    case HostIsa::kAvx512: return "avx512";
    case HostIsa::kAvx512Bf16: return "avx512bf16";
    case HostIsa::kAmxBf16: return "amx";
  }
  return "?";
}

HostIsa parse_host_isa(const std::string& s) {
  for (HostIsa i : kHostIsasBestFirst)
    if (s == name(i)) return i;
  core::fail(core::ErrorKind::kValue, "DGA_HOST_ISA", "unknown host ISA '", s,
             "' (expected amx, avx512bf16, avx512, avx2 or scalar)");
}

namespace {
using Clock = std::chrono::steady_clock;
// The FMA width race: rounds of about 0.15 ms per loop (10 or 12 chains x 2^16 iterations), the best of each.
constexpr int kRaceRounds = 8;
constexpr int64_t kRaceIters = 1 << 16;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

const FmaWidthRace& fma_width_race() {
  static const FmaWidthRace race = [] {
    FmaWidthRace r;
#if DGA_HOST_X86
    if (!host_isa_runs(HostIsa::kAvx512) || !host_isa_runs(HostIsa::kAvx2)) return r;
    auto rate = [](PeakLoopFn loop) {
      const auto t = Clock::now();
      const double flop = loop(kRaceIters);
      return flop / std::max(seconds_since(t), 1e-9);
    };
    // Alternating short rounds, the best of each: a busy moment of the machine (a neighbour on a shared host)
    // lowers single rounds of either side, not one side's whole measurement. Between AVX-512 rounds the AVX2
    // loop may run at the lower AVX-512 clock too; both at one clock, a part with one 512-bit FMA unit measures
    // about 1x (below the threshold) and one with two about 2x.
    peak_loop_avx2(kRaceIters);
    peak_loop_avx512(kRaceIters);
    for (int i = 0; i < kRaceRounds; ++i) {
      r.avx2 = std::max(r.avx2, rate(&peak_loop_avx2));
      r.avx512 = std::max(r.avx512, rate(&peak_loop_avx512));
    }
#endif
    return r;
  }();
  return race;
}

bool host_isa_runs(HostIsa isa) {
  const auto& f = core::cpu_features();
  switch (isa) {
    case HostIsa::kScalar: return true;
#if DGA_HOST_X86  // the build has the x86 micro-kernels (cmake/DgaLayers.cmake)
    case HostIsa::kAmxBf16: return f.amx_tile && f.amx_bf16 && f.os_amx && f.avx512f;  // its helpers use AVX-512F
    case HostIsa::kAvx512Bf16: return f.avx512f && f.avx512_bf16;
    case HostIsa::kAvx512: return f.avx512f && f.avx512bw && f.avx512vl && f.fma;  // its helpers use BW and VL
    case HostIsa::kAvx2: return f.avx2 && f.fma;
#endif
    default: return false;
  }
}

std::vector<HostIsa> supported_host_isas() {
  std::vector<HostIsa> v;
  for (HostIsa i : kHostIsasBestFirst)
    if (host_isa_runs(i)) v.push_back(i);
  return v;
}

namespace {
constexpr int kAuto = -1;
std::atomic<int> g_forced{kAuto};

HostIsa checked_isa(HostIsa isa, const char* source) {
  if (!host_isa_runs(isa))
    core::fail(core::ErrorKind::kRuntime, source, "host ISA '", name(isa),
               "' is not available (this CPU lacks it or this build has no micro-kernel for it)");
  return isa;
}

HostIsa env_or_best() {
  static const HostIsa chosen = [] {
    if (const char* e = std::getenv("DGA_HOST_ISA"); e && *e) return checked_isa(parse_host_isa(e), "DGA_HOST_ISA");
    const HostIsa best = supported_host_isas().front();
    if (best == HostIsa::kAvx512 && host_isa_runs(HostIsa::kAvx2) && !avx512_pays(fma_width_race()))
      return HostIsa::kAvx2;
    return best;
  }();
  return chosen;
}
}  // namespace

bool avx512_pays(const FmaWidthRace& race) { return race.avx512 >= arch::Host::kAvx512MinFmaGain * race.avx2; }

HostIsa active_host_isa() {
  const int f = g_forced.load(std::memory_order_relaxed);
  return f == kAuto ? env_or_best() : HostIsa(f);
}

void set_host_isa(HostIsa isa) { g_forced.store(int(checked_isa(isa, "isa"))); }
void reset_host_isa() { g_forced.store(kAuto); }

}  // namespace deepgemm_ascend::tile::host
