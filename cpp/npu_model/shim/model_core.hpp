// The model state of the core whose code runs (model_glue.cpp, model_group.cpp, model_vector.cpp): the
// instruction registers the model reads (MTE2_NZ_PARA, the atomic mode), the core's event and access
// checkers, its first error. Plain C++ (no devkit headers).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/access.hpp"
#include "deepgemm_ascend/npu_model/events.hpp"
#include "deepgemm_ascend/npu_model/group.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "deepgemm_ascend/npu_model/unit_flag.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "model_timing.hpp"

namespace dga_model {

namespace nm = deepgemm_ascend::npu_model;

// Pipes of the instructions (the devkit's pipe_t numbers).
using nm::kPipeFix, nm::kPipeM, nm::kPipeMte1, nm::kPipeMte2, nm::kPipeMte3, nm::kPipeS, nm::kPipeV;

struct Core {
  Core(const std::string& kernel, const std::string& name, int sub);

  std::string kernel, name;  // name: "core 3", "group 3 AIV1", ...
  int sub = -1;              // -1: a cube core (AIC), else the vector core's index in its group
  uint64_t nz_para = 0;
  int atomic = 0;       // 0 none, 1 add
  uint64_t loop3 = 1;   // LOOP3_PARA: [15:0] ND matrices of a Fixpipe (1), [31:16] src, [63:32] dst strides
  int atomic_type = 1;  // the vector copies' atomic type (npu_model::AtomicType; set_atomic_f32 ...)
  nm::VectorCore vec;   // a vector core's predicates and loop registers; every core's CTRL (Fixpipe reads it)
  // register -> the UB bytes vlds loaded and the value it loaded: a register whose bytes have changed since
  // (a by-value copy of another register at the same stack address, say) no longer reads those UB bytes.
  struct Loaded {
    const uint8_t* from = nullptr;
    nm::Vreg value;
  };
  std::unordered_map<const void*, Loaded> loaded_from;
  nm::EventModel events;
  nm::Hazards hazards;
  nm::UnitFlags unit_flags;  // a cube core's L0C unit flags
  nm::CoreTiming* timing = nullptr;  // the timing mode's clocks (model_timing.hpp), null when it is off
  // The timing mode's scheduler of the launch's cores and this core's slot in it: after each timed
  // instruction the core hands over once it has reached the epoch (npu_model/group.hpp).
  nm::GroupScheduler* scheduler = nullptr;
  int slot = 0;
  std::string error;  // the first model error (instructions also run in destructors: no throwing)
  deepgemm_ascend::core::ErrorKind error_kind = deepgemm_ascend::core::ErrorKind::kRuntime;
};

// A Fixpipe's LOOP3_PARA must name one ND matrix (several are not modelled).
void require_one_nd(uint64_t loop3);

// The core that runs now (begin_core, run_group).
Core& current();
void select(Core* core);

// Runs one modelled instruction; a model error is kept for the end of the run and the instruction skipped.
// Records that the process reached a modelled instruction (model_reached.cpp).
void reached(const char* instr);

template <class F>
void guard(const char* instr, F&& f) {
  thread_local std::unordered_set<const char*> seen;  // names are literals: one record per name and thread
  if (seen.insert(instr).second) reached(instr);
  try {
    f();
  } catch (const deepgemm_ascend::core::Error& e) {
    Core& c = current();
    if (!c.error.empty()) return;
    c.error_kind = e.kind();
    // The event and hazard checkers' messages name kernel and core themselves, the GM bounds checker's the
    // instruction too.
    const bool named = e.arg() == "event" || e.arg() == "hazard";
    // An operand start rule's message (hazards.hpp) names kernel, core and instruction as well.
    const bool whole = e.arg() == "gm bounds" || std::string_view(e.what()).rfind("kernel ", 0) == 0;
    if (whole) c.error = e.what();
    else c.error = (named ? std::string() : "kernel " + c.kernel + ", " + c.name + ": ") + instr + ": " + e.what();
  }
}

// In the timing mode, after a timed instruction: the core hands over to the launch's other cores once its
// latest instruction has started at or past the scheduler's epoch.
inline void at_epoch(Core& c) {
  if (c.scheduler != nullptr) c.scheduler->at_cycle(c.slot, c.timing->last_start());
}

// What an instruction costs in the timing mode (model_timing.hpp): its on-chip cycles, for a DMA the
// granule its GM side is counted in (0: the DMA granule) and, when the timing-only mode may skip it, its GM
// side as a span (the GM runs it notes otherwise); an Mmad's or Fixpipe's L0C bytes for its unit flag.
struct Timed {
  double cycles = 0;
  bool skippable = false;
  const nm::GmSpan* gm = nullptr;
  uint32_t granule = 0;
  const void* l0c = nullptr;
  size_t l0c_bytes = 0;
};

// Runs instruction `instr` on `pipe`: `f(acc)` moves or computes and notes its on-chip runs, which the
// access checker then checks against the buffer bounds and the pipe order. An Mmad or Fixpipe with a
// unitFlag (0: none) waits on and sets L0C's unit flags around it. In the timing mode the instruction is
// also timed; in the timing-only mode a skippable one is only timed. A vector micro-op (pipe V) costs
// vector_cycles_per_op and is skippable.
template <class F>
void run(const char* instr, int pipe, F&& f, int unit_flag = 0, Timed t = {}) {
  if (pipe == kPipeV) t = {.cycles = deepgemm_ascend::arch::Ascend950::kTiming.vector_cycles_per_op, .skippable = true};
  guard(instr, [&] {
    Core& c = current();
    // The Fixpipe's and MTE3's GM writes are atomic adds while SetAtomicAdd is on.
    nm::Work w{.cycles = t.cycles, .gm = t.gm, .runs = nullptr, .gm_granule = t.granule,
               .atomic = (pipe == kPipeFix || pipe == kPipeMte3) && c.atomic == 1, .unit_flag = unit_flag,
               .l0c = static_cast<const uint8_t*>(t.l0c), .l0c_bytes = t.l0c_bytes};
    if (c.timing != nullptr && t.skippable && timing_only()) {
      c.timing->instruction(pipe, instr, w);
      return at_epoch(c);
    }
    nm::Accesses acc;
    f(&acc);
    c.unit_flags.before(pipe, unit_flag, acc, c.hazards);
    c.hazards.instruction(pipe, instr, acc);
    c.unit_flags.after(pipe, unit_flag, acc, c.hazards);
    if (c.timing == nullptr) return;
    w.gm = nullptr, w.runs = &acc;
    c.timing->instruction(pipe, instr, w);
    at_epoch(c);
  });
}

}  // namespace dga_model
