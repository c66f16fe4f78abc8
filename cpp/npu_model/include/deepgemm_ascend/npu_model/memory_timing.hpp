// The NPU instruction model's timing mode, the memory system the cores of a launch share: HBM behind an L2.
// A DMA's GM side (GmSpan) is counted in granules (a burst's bytes rounded out to the granule at both ends);
// each L2 line it reads is a hit when the line was read or written before and less than the L2's size came
// from HBM in between (in time, whichever core touched it: LRU by bytes), else a miss that HBM serves. Writes
// go into the L2 ("设置合理的L2-CacheMode": the L2 writes back), allocating their lines; their write-back to
// HBM takes HBM bandwidth from the write on, without holding the writer. HBM and the L2 each serve a fixed number of bytes per
// cycle, shared by every core in time order of the requests the model has seen (a calendar of 256-cycle
// buckets): a core that the model runs later finds the bandwidth the earlier ones used taken.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "deepgemm_ascend/arch/timing.hpp"
#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

// `mats` blocks of `rows` rows of `row_bytes` each.
struct GmSpan {
  const uint8_t* p = nullptr;
  uint64_t row_bytes = 0;
  uint64_t rows = 1, row_stride = 0;
  uint64_t mats = 1, mat_stride = 0;
  bool write = false;
};

struct MemoryStats {
  uint64_t hbm_read = 0, hbm_write = 0, l2_hit = 0;  // bytes, as counted in granules
};

class MemoryTiming {
 public:
  explicit MemoryTiming(const arch::TimingConstants& k);

  // The GM side of a DMA that starts at cycle t and moves at most `rate` bytes per cycle: the cycle its last
  // byte has moved, without the latency (latency()).
  double transfer(double t, const GmSpan& s, uint32_t granule, double rate);
  // The same for the GM runs an instruction noted (Run::gm).
  double transfer(double t, const Accesses& runs, uint32_t granule, double rate);
  double latency(bool write) const { return write ? k_.gm_write_latency_cycles : k_.gm_read_latency_cycles; }
  const MemoryStats& stats() const { return stats_; }

 private:
  // Bytes per bucket of kBucket cycles, at most `rate` per cycle.
  class Calendar {
   public:
    explicit Calendar(double rate) : rate_(rate) {}
    // Serves `bytes` from cycle t, at most `cap` bytes per cycle: the cycle the last byte is served.
    double serve(double t, double bytes, double cap);
    // Bytes served between cycles t0 and t1 (whole buckets).
    double between(double t0, double t1) const;

   private:
    void grow(size_t bucket);
    void add(size_t bucket, double bytes);  // the Fenwick tree of used_
    double prefix(size_t buckets) const;
    double rate_;
    std::vector<double> used_, tree_;
  };
  static constexpr double kBucket = 256;

  struct Count {
    double hits = 0, misses = 0;
    bool write = false;
  };
  bool hit(uint64_t line, double t);
  void count(uintptr_t at, uint64_t bytes, bool write, double t, uint64_t granule, Count& c);
  double finish(double t, const Count& c, double rate);

  const arch::TimingConstants& k_;
  Calendar hbm_, l2_;
  std::unordered_map<uint64_t, double> lines_;  // line -> the cycle it was last touched
  MemoryStats stats_;
};

}  // namespace deepgemm_ascend::npu_model
