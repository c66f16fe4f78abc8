// The NPU instruction model, L0C's unit flags ("UnitFlag", the Mmad page's key features: one flag per 512 B
// block of L0C, which Mmad and Fixpipe wait on and set when their unitFlag is 2 or 3):
//   * an Mmad writing a block waits until its flag is 0; unitFlag 3 then sets it to 1 (2 leaves it);
//   * a Fixpipe reading a block waits until its flag is 1; unitFlag 3 then sets it to 0 (2 leaves it).
// The flags are how the M and FIX pipes order each other without SetFlag / WaitFlag: a Fixpipe is ordered
// after the Mmad that set its blocks, an Mmad after the Fixpipe that cleared them (the access checker is
// told so). The model runs a core's instructions in program order, so a wait that a later instruction in
// program order would end (a Fixpipe on a block no Mmad has set, an Mmad on a block still set) would have
// run on other data: it is an error. unitFlag 0 is off; 1 is not documented and refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "deepgemm_ascend/npu_model/access.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"

namespace deepgemm_ascend::npu_model {

class UnitFlags {
 public:
  UnitFlags() = default;
  UnitFlags(const uint8_t* l0c, size_t bytes);

  // Before an instruction on pipe `pipe` (M: Mmad, FIX: Fixpipe) with the runs it has noted: checks the
  // flags of the L0C blocks it writes (Mmad) or reads (Fixpipe) and orders the pipe after their last change.
  void before(int pipe, int unit_flag, const Accesses& runs, Hazards& hazards) const;
  // After it: unitFlag 3 changes those flags, recording the pipe's clock for the instructions they order.
  void after(int pipe, int unit_flag, const Accesses& runs, const Hazards& hazards);

 private:
  template <class F>
  void for_blocks(int pipe, const Accesses& runs, F f) const;

  const uint8_t* l0c_ = nullptr;
  size_t bytes_ = 0;
  std::vector<uint8_t> set_;          // per block: 1 once an Mmad with unitFlag 3 wrote it
  std::vector<Hazards::Clock> when_;  // per block: the clock of the pipe that last changed the flag
};

}  // namespace deepgemm_ascend::npu_model
