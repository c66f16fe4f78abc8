// The Arch the host backend runs with: by default the host sized from this machine's caches (rules
// and defaults in arch/host.hpp); with DGA_HOST_ARCH=ascend950 the Ascend 950's buffer capacities,
// alignments, event ids, core count and cost model, so that every kernel runs the tile configs, stage
// counts and buffer budgets the NPU will use (an emulated 950; combine with DGA_CHECKED=1).
#pragma once

#include <cstdint>
#include <string>

#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/host/buffer_spec.hpp"

namespace deepgemm_ascend::runtime {

struct HostCaches {
  int64_t l1d = 0, l2 = 0, l3 = 0;  // bytes per core (L3: shared)
  bool from_system = false;         // false: defaults, the sizes could not be read
};

const HostCaches& host_caches();

enum class HostArch { kHost, kAscend950 };
HostArch host_arch();            // from DGA_HOST_ARCH=host|ascend950, read once (default host)
const char* name(HostArch a);
// Cores the heuristics plan for: the emulated NPU's cube cores, or the host backend's AI cores.
int planning_cores();

// Capacities and alignments of one host AI core's buffers.
const tile::host::BufferSpec& host_buffer_spec();
// The same numbers for the heuristics.
heuristics::ArchLimits host_arch_limits();

}  // namespace deepgemm_ascend::runtime
