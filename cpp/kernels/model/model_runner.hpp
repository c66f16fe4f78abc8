// Running NPU kernel code on the instruction model, core after core in one process (cube-only kernels:
// their cores do not wait on each other): begin_core sets the per-core instruction state and a fresh
// event checker; end_core checks that every flag the core set was waited.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "deepgemm_ascend/npu_model/hazards.hpp"

namespace dga_model {
void begin_core(const std::string& kernel, int core);
void end_core();
// The L0A_MX / L0B_MX scales of an L0A / L0B address (the devkit's CPU buffers: address / 16 from the
// buffer's start); defined with the CPU-debug runtime.
const uint8_t* mx_scales_of(const void* l0, bool b);
// The core's buffer positions (the devkit's CPU buffers, with the 950's capacities).
std::vector<deepgemm_ascend::npu_model::BufferPos> buffer_positions();
}  // namespace dga_model
