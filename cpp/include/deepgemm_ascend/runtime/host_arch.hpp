// The host Arch sized from this machine's caches (rules and defaults in arch/host.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/tile/buffer_spec.hpp"

namespace deepgemm_ascend::runtime {

struct HostCaches {
  int64_t l1d = 0, l2 = 0, l3 = 0;  // bytes per core (L3: shared)
  bool from_system = false;         // false: defaults, the sizes could not be read
};

const HostCaches& host_caches();

// Capacities and alignments of one host AI core's buffers.
const tile::BufferSpec& host_buffer_spec();
// The same numbers for the heuristics.
heuristics::ArchLimits host_arch_limits();

}  // namespace deepgemm_ascend::runtime
