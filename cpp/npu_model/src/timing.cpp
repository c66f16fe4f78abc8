#include "deepgemm_ascend/npu_model/timing.hpp"

#include <algorithm>

namespace deepgemm_ascend::npu_model {

namespace {

bool overlap(const uint8_t* a, size_t an, const uint8_t* b, size_t bn) { return a < b + bn && b < a + an; }

// A DMA's GM bytes and direction, as its Work gives them.
double gm_bytes(const Work& w) {
  if (w.gm != nullptr) return double(w.gm->row_bytes * w.gm->rows * w.gm->mats);
  double b = 0;
  for (const Run& r : *w.runs) b += r.gm ? double(r.bytes) : 0.0;
  return b;
}
bool gm_writes(const Work& w) {
  if (w.gm != nullptr) return w.gm->write;
  for (const Run& r : *w.runs)
    if (r.gm) return r.write;
  return false;
}
}  // namespace

CoreTiming::CoreTiming(const arch::TimingConstants& k, MemoryTiming* memory, bool trace)
    : k_(k), memory_(memory), trace_on_(trace), scalar_(k.core_start_us * k.clock_ghz * 1e3) {}

double CoreTiming::ready(int pipe) const { return std::max(free_[size_t(pipe)], scalar_); }

// Unit flags (Mmad.md / Fixpipe's unitFlag): a Fixpipe reading the L0C a unit-flagged Mmad writes starts
// once the Mmad has written its first unit_flag_bytes and ends no earlier than that much after the Mmad; an
// Mmad writing the L0C a unit-flagged Fixpipe reads waits the same way behind the Fixpipe.
double CoreTiming::unit_flag_gate(int pipe, const Work& w, double start, double& min_end) const {
  if (w.unit_flag == 0 || w.l0c == nullptr) return start;
  const UnitFlagRun& other = pipe == kPipeFix ? last_mmad_ : last_fix_;
  if (other.bytes == 0 || !overlap(w.l0c, w.l0c_bytes, other.l0c, other.bytes)) return start;
  const double lag = double(k_.unit_flag_bytes) / k_.fix_bytes_per_cycle;
  min_end = std::max(min_end, other.end + lag);
  return std::max(start, other.start + lag);
}

void CoreTiming::instruction(int pipe, const char* name, const Work& w) {
  const auto p = size_t(pipe);
  const double unblocked = ready(pipe);
  double start = std::max(unblocked, gate_[p]);
  double min_end = 0;
  start = unit_flag_gate(pipe, w, start, min_end);
  PipeStats& s = stats_[p];
  s.flag_wait += start - unblocked;
  double end = start + w.cycles, latency = 0;
  const double dma_bytes = w.gm != nullptr || w.runs != nullptr ? gm_bytes(w) : 0.0;
  if (dma_bytes > 0) {  // a DMA (its GM side)
    const double rate = k_.dma_core_bytes_per_cycle;
    const double moved = w.gm != nullptr ? memory_->transfer(start, *w.gm, w.gm_granule, rate, w.atomic)
                                         : memory_->transfer(start, *w.runs, w.gm_granule, rate, w.atomic);
    const double own = start + dma_bytes / rate;
    if (moved > start) s.memory_wait += std::max(0.0, moved - std::max(own, end));
    end = std::max(end, moved);
    latency = memory_->latency(gm_writes(w));
  }
  end = std::max(end, min_end);
  last_start_ = start;
  s.busy += end - start;
  ++s.instructions;
  free_[p] = end;
  done_[p] = std::max(done_[p], end + latency);
  if (pipe != kPipeV) scalar_ += k_.issue_cycles;  // a vector function issues its own micro-ops
  if (w.unit_flag != 0 && (pipe == kPipeM || pipe == kPipeFix))
    (pipe == kPipeM ? last_mmad_ : last_fix_) = {w.l0c, w.l0c_bytes, start, end};
  if (trace_on_ && trace_.size() < kMaxTrace) trace_.push_back({int8_t(pipe), start, end + latency, name});
}

double CoreTiming::set_time(int pipe) const {
  if (pipe == kPipeS || pipe < 0) return scalar_;
  return std::max({done_[size_t(pipe)], gate_[size_t(pipe)], scalar_});
}

void CoreTiming::set_flag(int src, int dst, int id) {
  flags_[{src, dst, id}].push_back(set_time(src));
  if (src != kPipeS) scalar_ += k_.issue_cycles;
}

void CoreTiming::wait_flag(int src, int dst, int id) {
  auto it = flags_.find({src, dst, id});
  if (it == flags_.end() || it->second.empty()) return;  // the event checker reports a wait with no set
  wait_until(dst, it->second.front());
  it->second.pop_front();
  if (dst != kPipeS) scalar_ += k_.issue_cycles;
}

void CoreTiming::wait_until(int pipe, double t) {
  if (pipe == kPipeS || pipe < 0) {
    scalar_ = std::max(scalar_, t);
    return;
  }
  gate_[size_t(pipe)] = std::max(gate_[size_t(pipe)], t);
}

void CoreTiming::barrier(int pipe) {
  if (pipe == kPipeAll) {
    for (int q = 0; q < kPipes; ++q) scalar_ = std::max(scalar_, done_[size_t(q)]);
    return;
  }
  gate_[size_t(pipe)] = std::max(gate_[size_t(pipe)], done_[size_t(pipe)]);
}

double CoreTiming::end() const {
  double e = scalar_;
  for (double f : done_) e = std::max(e, f);
  return e;
}

}  // namespace deepgemm_ascend::npu_model
