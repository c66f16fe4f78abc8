// The NPU instruction model's timing mode, the memory system the cores of a launch share: HBM behind an L2.
// A DMA's GM side (GmSpan) is counted in granules (a burst's bytes rounded out to the granule at both ends);
// each L2 line it reads is a hit when the line was read or written before and less than the L2's size was
// allocated in the L2 in between (in time, whichever core allocated it: LRU by bytes), else a miss that HBM
// serves. Writes go into the L2, which writes back (asc_copy_l0c2gm_arch_3510.md, l2_cache_ctl NORMAL: "采用
// write back策略写入L2 Cache"; 系统缓存概述.md: dirty data reaches GM only when its line is replaced or
// cleaned): a written line is allocated and dirty, and HBM takes its bytes, once, only when it is evicted -
// when the L2's size has been allocated after its last use - and in the background, holding no core. A
// kernel's end does not wait for its dirty lines (nothing in the documents cleans the L2 at a kernel's end).
// An atomic add sums what it writes with what GM holds (SetAtomicAdd.md: "将待拷贝的内容和GM已有内容进行
// 求和，然后将求和结果写入GM"), so its lines not in the L2 are first filled from HBM, as a read's misses.
// HBM and the L2 each serve a fixed number of bytes per cycle, shared by every core in time order of the
// requests the model has seen (a calendar of 256-cycle buckets).
#pragma once

#include <cstdint>
#include <deque>
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
  uint64_t hbm_read = 0, l2_hit = 0, l2_write = 0;  // bytes, as counted in granules
  uint64_t hbm_write = 0;  // bytes of dirty L2 lines written back (evicted) during the launch
};

// The requests a write of `bytes` at `at` makes when each is a naturally aligned block of max_request,
// max_request / 2, ... down to min_request bytes, the largest that fits, a partial block rounded up to
// min_request (the GM requests of 128 B / 256 B / 512 B, "非对齐会向上取整").
uint64_t write_requests(uintptr_t at, uint64_t bytes, uint64_t max_request, uint64_t min_request);
// The same for every row of a span.
uint64_t write_requests(const GmSpan& s, uint64_t max_request, uint64_t min_request);

class MemoryTiming {
 public:
  explicit MemoryTiming(const arch::TimingConstants& k);

  // The GM side of a DMA that starts at cycle t and moves at most `rate` bytes per cycle: the cycle its last
  // byte has moved, without the latency (latency()).
  // atomic: the writes are atomic adds.
  double transfer(double t, const GmSpan& s, uint32_t granule, double rate, bool atomic = false);
  // The same for the GM runs an instruction noted (Run::gm).
  double transfer(double t, const Accesses& runs, uint32_t granule, double rate, bool atomic = false);
  double latency(bool write) const { return write ? k_.gm_write_latency_cycles : k_.gm_read_latency_cycles; }
  const MemoryStats& stats() const { return stats_; }

 private:
  // Bytes per bucket of kBucket cycles, at most `rate` per cycle.
  class Calendar {
   public:
    explicit Calendar(double rate) : rate_(rate) {}
    // Notes `bytes` at cycle t, without a rate (a record, not a resource).
    void note(double t, double bytes);
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
    double hits = 0, misses = 0, writes = 0;
    double fetched = 0;  // HBM bytes of the read misses and the atomic adds' fills: whole lines
  };
  struct Line {
    double last = 0;     // the cycle it was last touched
    uint64_t used = 0;   // allocated_ when it was last touched
    bool dirty = false;
  };
  bool hit(Line& l, double t) const;
  void allocate(double t, double bytes);
  void touch(uint64_t line, Line& l, bool write);
  void count(uintptr_t at, uint64_t bytes, bool write, bool atomic, double t, uint64_t granule, Count& c);
  double finish(double t, const Count& c, double rate);

  const arch::TimingConstants& k_;
  Calendar hbm_, l2_;
  Calendar fills_;  // bytes allocated in the L2 (read misses, newly written lines), for the LRU
  uint64_t allocated_ = 0;  // the same, in the order the model sees them
  std::unordered_map<uint64_t, Line> lines_;
  std::deque<std::pair<uint64_t, uint64_t>> dirty_;  // (allocated_ at the write, line), oldest first
  MemoryStats stats_;
};

}  // namespace deepgemm_ascend::npu_model
