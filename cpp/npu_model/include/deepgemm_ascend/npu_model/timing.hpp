// The NPU instruction model's timing mode: when each instruction of a core runs. The scalar unit issues a
// core's instructions in program order into one queue per pipe; an instruction starts when its pipe has
// finished the one before it, when the flags its pipe waits for are set and when the scalar unit has issued
// it, and lasts its pipe's fixed cost plus its size over the pipe's throughput (arch::TimingConstants). A
// flag set on a pipe is set when everything issued on that pipe before it has finished; a WaitFlag holds
// back its pipe's later instructions until then ("SetFlag/WaitFlag"); PipeBarrier<PIPE_ALL> holds the
// scalar unit until every pipe is idle. A DMA's GM side goes through the memory system every core of the
// launch shares (memory_timing.hpp). Cores keep their own clocks (cycles from the launch's start): the
// model runs them in turns, in epochs of simulated time (last_start() tells the scheduler where a core is,
// npu_model/group.hpp), and a cross-core flag carries its set's time to the wait.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "deepgemm_ascend/arch/timing.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "deepgemm_ascend/npu_model/memory_timing.hpp"

namespace deepgemm_ascend::npu_model {

// What one instruction costs: on-chip cycles on its pipe, and for a DMA its GM side.
struct Work {
  double cycles = 0;
  const GmSpan* gm = nullptr;      // the GM side as a span (an instruction the model did not run), or
  const Accesses* runs = nullptr;  // as the GM runs the instruction noted
  uint32_t gm_granule = 0;  // 0: the DMA granule
  bool atomic = false;      // its GM writes are atomic adds (SetAtomicAdd)
  // An Mmad or Fixpipe with a unit flag (0: none) and the L0C bytes it writes or reads.
  int unit_flag = 0;
  const uint8_t* l0c = nullptr;
  size_t l0c_bytes = 0;
};

// Per pipe of one core: the cycles it was busy, the cycles its next instruction waited for a flag (or a
// cross-core flag, or the Mmad / Fixpipe unit flags) beyond when the pipe and the scalar unit were ready,
// the cycles a DMA took beyond its own rate and latency (other cores' traffic), and its instructions.
struct PipeStats {
  double busy = 0;
  double flag_wait = 0;
  double memory_wait = 0;
  uint64_t instructions = 0;
};

// One instruction of a traced core: its pipe, start and end cycle, and name (a literal).
struct TraceEvent {
  int8_t pipe;
  double start, end;
  const char* name;
};

class CoreTiming {
 public:
  // trace: keep every instruction's TraceEvent (at most kMaxTrace).
  CoreTiming(const arch::TimingConstants& k, MemoryTiming* memory, bool trace = false);

  void instruction(int pipe, const char* name, const Work& w);
  void set_flag(int src, int dst, int id);
  void wait_flag(int src, int dst, int id);
  void barrier(int pipe);
  // A cross-core flag set on `pipe` now: the cycle it is set. wait_until: the wait on `pipe` (-1: the scalar
  // unit, which blocks every pipe) lets its later instructions start at cycle t at the earliest.
  double set_time(int pipe) const;
  void wait_until(int pipe, double t);

  // The cycle the core's last instruction ends; the cycle its latest instruction started.
  double end() const;
  double last_start() const { return last_start_; }
  const std::array<PipeStats, kPipes>& stats() const { return stats_; }
  const std::vector<TraceEvent>& trace() const { return trace_; }

  static constexpr size_t kMaxTrace = 400000;

 private:
  struct UnitFlagRun {
    const uint8_t* l0c = nullptr;
    size_t bytes = 0;
    double start = 0, end = 0;
  };
  double ready(int pipe) const;
  double unit_flag_gate(int pipe, const Work& w, double start, double& min_end) const;

  const arch::TimingConstants& k_;
  MemoryTiming* memory_;
  bool trace_on_;
  double scalar_;  // the scalar unit's clock: from the core's start
  double last_start_ = 0;
  std::array<double, kPipes> free_{};  // when the pipe can start its next instruction
  std::array<double, kPipes> done_{};  // when everything given to the pipe has completed
  std::array<double, kPipes> gate_{};  // waits: the pipe's next instruction starts no earlier
  std::array<PipeStats, kPipes> stats_{};
  std::map<std::tuple<int, int, int>, std::deque<double>> flags_;
  UnitFlagRun last_mmad_, last_fix_;
  std::vector<TraceEvent> trace_;
};

}  // namespace deepgemm_ascend::npu_model
