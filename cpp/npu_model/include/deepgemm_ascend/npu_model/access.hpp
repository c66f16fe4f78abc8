// The NPU instruction model: the bytes an instruction reads and writes, as runs. The model's instructions
// fill an Accesses list when given one; the checker (hazards.hpp) finds each on-chip run's buffer position
// and checks its bounds and the pipe order of the runs, and checks each GM run against the launch's GM
// regions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deepgemm_ascend::npu_model {

// A documented start-address rule of an instruction's operand: the operand must start in one of `buffers`
// ("L1", "L0A/L0B": buffer position names, '/'-separated) at a byte offset that is a multiple of `align`
// (the 950's address rules, cited by `page`). The access checker, which knows where each buffer starts,
// checks it (hazards.hpp); an operand in no buffer position it knows (GM, say) is not checked.
struct StartRule {
  const char* operand;
  const char* buffers;
  uint32_t align;
  const char* page;
};

struct Run {
  const uint8_t* p = nullptr;
  size_t bytes = 0;
  bool write = false;
  // false: bounds only. A vector register load reads 256 B whatever lanes its users keep; the lanes they
  // use are checked for order when they are used (the V pipe runs in order).
  bool ordered = true;
  // true: a run of global memory (a DMA's GM side), checked against the launch's GM regions when set
  // (set_gm_regions, hazards.hpp) and not for order.
  bool gm = false;
  // Not null: no bytes, only the operand start `p` checked against this rule.
  const StartRule* rule = nullptr;
};
using Accesses = std::vector<Run>;

inline void note(Accesses* acc, const void* p, size_t bytes, bool write) {
  if (acc != nullptr && bytes > 0) acc->push_back({static_cast<const uint8_t*>(p), bytes, write, true});
}

inline void note_gm(Accesses* acc, const void* p, size_t bytes, bool write) {
  if (acc != nullptr && bytes > 0) acc->push_back({static_cast<const uint8_t*>(p), bytes, write, false, true});
}

// Notes that an operand starts at p under `rule` (a rule with static storage: the run keeps its address).
inline void note_start(Accesses* acc, const void* p, const StartRule& rule) {
  if (acc != nullptr) acc->push_back({static_cast<const uint8_t*>(p), 0, false, true, false, &rule});
}

}  // namespace deepgemm_ascend::npu_model
