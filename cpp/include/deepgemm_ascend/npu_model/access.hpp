// The NPU instruction model (issue 16): the bytes an instruction reads and writes, as runs. The model's
// instructions fill an Accesses list when given one; the checker (hazards.hpp) finds each run's buffer
// position, checks its bounds and the pipe order of the runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deepgemm_ascend::npu_model {

struct Run {
  const uint8_t* p = nullptr;
  size_t bytes = 0;
  bool write = false;
  // false: bounds only. A vector register load reads 256 B whatever lanes its users keep; the lanes they
  // use are checked for order when they are used (the V pipe runs in order).
  bool ordered = true;
};
using Accesses = std::vector<Run>;

inline void note(Accesses* acc, const void* p, size_t bytes, bool write) {
  if (acc != nullptr && bytes > 0) acc->push_back({static_cast<const uint8_t*>(p), bytes, write, true});
}

}  // namespace deepgemm_ascend::npu_model
