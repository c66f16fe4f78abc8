// Running NPU kernel code on the instruction model, core after core in one process (cube-only kernels:
// their cores do not wait on each other): begin_core sets the per-core instruction state and a fresh
// event checker; end_core checks that every flag the core set was waited.
#pragma once

#include <string>

namespace dga_model {
void begin_core(const std::string& kernel, int core);
void end_core();
}  // namespace dga_model
