// The host target's micro-kernel ISA: which ones run here and the one in use.
#pragma once

#include <string>
#include <vector>

namespace deepgemm_ascend::tile::host {

// kAvx512: AVX-512F fp32 FMAs on widened bf16 (CPUs with AVX-512 but no AVX512-BF16, e.g. Ice Lake);
// kAvx512Bf16: VDPBF16PS; kAmxBf16: AMX tiles.
enum class HostIsa { kScalar, kAvx2, kAvx512, kAvx512Bf16, kAmxBf16 };

const char* name(HostIsa isa);

// Whether `isa` has a micro-kernel in this build and runs on this CPU.
bool host_isa_runs(HostIsa isa);
// ISAs that have a micro-kernel in this build and run on this CPU, best first.
std::vector<HostIsa> supported_host_isas();
// The ISA in use: set_host_isa(), else DGA_HOST_ISA (amx|avx512bf16|avx512|avx2|scalar), else the best,
// except that avx512 (the AVX2 kernel's arithmetic on wider vectors) gives way to avx2 where its FMA loop
// is not measurably faster (fma_width_race).
// Forcing an ISA this CPU or build cannot run raises a RuntimeError.
HostIsa active_host_isa();
void set_host_isa(HostIsa isa);
void reset_host_isa();  // back to DGA_HOST_ISA / automatic
HostIsa parse_host_isa(const std::string& s);

// The AVX-512F and AVX2 calibration loops raced on the calling thread, once per process (host_peak.cpp):
// FLOP per second of each, best of a few alternating rounds; zeros where the CPU lacks either.
struct FmaWidthRace {
  double avx512 = 0.0, avx2 = 0.0;
};
const FmaWidthRace& fma_width_race();
// Whether the default keeps avx512 over avx2, given a race's result (arch::Host::kAvx512MinFmaGain).
bool avx512_pays(const FmaWidthRace& race);

}  // namespace deepgemm_ascend::tile::host
