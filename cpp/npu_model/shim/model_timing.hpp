// The timing mode of a launch on the model (npu_model/timing.hpp), switched on by the environment:
//   DGA_NPU_MODEL_TIMING=FILE  each launch appends its report to FILE as one JSON object per line: the
//                              predicted time, per core each pipe's busy cycles and waits, the memory
//                              system's bytes, and the instructions of the traced cores;
//   DGA_NPU_MODEL_TIMING_ONLY=1  the cube's arithmetic and data moves and the vector core's arithmetic are
//                              not run (their operands' values stay what they were), only timed: the
//                              results are wrong, the time is the same; GM -> UB copies still run (the
//                              scalar unit may read what they bring);
//   DGA_NPU_MODEL_TRACE=PREFIX  the cores whose names start with PREFIX are traced (default: the first core
//                              the launch creates and, in a mix launch, its group).
// Plain C++ (no devkit headers).
#pragma once

#include <memory>
#include <string>

#include "deepgemm_ascend/npu_model/timing.hpp"

namespace dga_model {

namespace nm = deepgemm_ascend::npu_model;

// For the duration of a launch: the memory system and every core's timing, the report at its end.
class TimingScope {
 public:
  TimingScope(const std::string& kernel, unsigned blocks);
  ~TimingScope();
  TimingScope(const TimingScope&) = delete;
  TimingScope& operator=(const TimingScope&) = delete;
};

// The cores of a launch in the timing mode run in epochs of this many cycles (npu_model/group.hpp): a core
// hands over once its latest instruction starts at or past the epoch's end. A simulation parameter (4 of
// the memory calendars' 256-cycle buckets): within an epoch the cores still claim bandwidth in run order.
constexpr double kEpochCycles = 1024;

// Whether the launch runs in the timing mode.
bool timing_on();
// A new core's timing (owned by the launch), nullptr when timing is off.
nm::CoreTiming* core_timing(const std::string& core_name);
// Whether the launch runs in timing-only mode.
bool timing_only();

}  // namespace dga_model
