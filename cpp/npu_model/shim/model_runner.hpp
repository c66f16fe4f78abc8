// Running NPU kernel code on the instruction model. A cube-only (or vector-only) kernel's cores run one
// after the other (they do not wait on each other): begin_core sets the core's instruction state and fresh checkers,
// end_core checks that every flag the core set was waited and throws the core's first model error; in the
// timing mode they run together instead, in epochs of simulated time (run_lockstep). A mix kernel's groups
// (each an AIC and its two AIVs) run together with run_groups (in the timing mode in epochs too).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "deepgemm_ascend/npu_model/hazards.hpp"

namespace dga_model {
enum class Cores { kCube, kMix, kVector };  // AIC only; each cube core with its two vector cores; AIV only

// Runs a kernel on `blocks` cores of the model: body(slot) runs the kernel's code on the core that runs now
// (slot 0 a cube core, 1 and 2 a group's vector cores; an AIV-only kernel's cores are slot 1), with the
// devkit's per-core globals (block index, core type, UB, TPipe) set for it. Throws the first model error.
void run_cores(const std::string& kernel, unsigned blocks, Cores cores, const std::function<void(int)>& body);

void begin_core(const std::string& kernel, int core, bool vector = false);
void end_core();
// Drops the running core after an exception left its kernel mid-way (no end-of-kernel checks).
void abandon_core();
// The timing mode's cores of a cube-only (vector: vector-only) launch as threads, one at a time, each
// handing over once it reaches the epoch: switch_core(core) makes the devkit's per-core globals and buffers
// those of that core, body(slot) runs the kernel on it. Throws the first core's error (in core order).
void run_lockstep(const std::string& kernel, int cores, bool vector, const std::function<void(int)>& switch_core,
                  const std::function<void(int)>& body);
// The cores of every group of a mix launch (slots 0 AIC, 1 AIV0, 2 AIV1) as threads, one at a time, all
// groups together (a core may wait for other groups' cores, cross-core mode 0): switch_core(group, slot)
// makes the devkit's per-core globals and buffers those of that core, body(slot) runs the kernel on it.
// ub: each group's slots' UB bases (the AIC addresses its AIVs' UBs through its own). Throws the first
// model error, a deadlock, or a cross-core flag left set.
void run_groups(const std::string& kernel, int groups, const std::vector<std::array<const uint8_t*, 3>>& ub,
                const std::function<void(int, int)>& switch_core, const std::function<void(int)>& body);
// The L0A_MX / L0B_MX scales of an L0A / L0B address (the devkit's CPU buffers: address / 16 from the
// buffer's start); defined with the CPU-debug runtime.
const uint8_t* mx_scales_of(const void* l0, bool b);
// The L0A_MX / L0B_MX destination of load_cbuf_to_ca_mx / _cb_mx: either an address in that buffer (the
// devkit's CPU-debug wrapper) or the L0A / L0B address divided by 16 (its device branch, which CATLASS
// calls directly). nullptr when mx_dst is neither.
uint8_t* mx_destination(uint64_t mx_dst, bool b);
// A core's buffer positions (the devkit's CPU buffers, with the 950's capacities): a cube core's L1, L0A,
// L0B, L0C, L0A_MX, L0B_MX, or a vector core's UB (the current one).
std::vector<deepgemm_ascend::npu_model::BufferPos> buffer_positions(bool vector);
}  // namespace dga_model
