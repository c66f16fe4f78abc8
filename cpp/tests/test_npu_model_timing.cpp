// The instruction model's timing mode (npu_model/timing.hpp, memory_timing.hpp) on hand-made instruction
// streams: pipes in parallel and in order, flags, barriers, cross-core waits, unit flags, and the memory
// system's hits, misses and shared bandwidth.
#include <gtest/gtest.h>

#include <vector>

#include "deepgemm_ascend/npu_model/memory_timing.hpp"
#include "deepgemm_ascend/npu_model/timing.hpp"

namespace npu_model_timing_test {

namespace nm = deepgemm_ascend::npu_model;
using deepgemm_ascend::arch::TimingConstants;

constexpr int kS = 0, kV = 1, kM = 2, kMte1 = 3, kMte2 = 4, kFix = 10;

// Round numbers: a free scalar unit, 100 B/cycle DMAs, no latency, an HBM of 100 B/cycle behind an L2 of
// 1000 B/cycle and 1 MiB.
TimingConstants constants() {
  return {.clock_ghz = 1, .cube_cores = 2, .vector_cores_per_cube = 2, .mmad_k_fp16 = 16, .mmad_k_fp32 = 1,
          .mmad_k_8bit = 32, .mmad_k_mx_fp4 = 64, .mmad_fixed_cycles = 0, .mte1_bytes_per_cycle = 256,
          .mte1_transposed_l0b_bytes_per_cycle = 128, .mte1_mx_scale_bytes_per_cycle = 32, .mte1_fixed_cycles = 0,
          .fix_bytes_per_cycle = 128, .fix_ub_bytes_per_cycle = 128, .fix_fixed_cycles = 0, .vector_cycles_per_op = 1,
          .dma_core_bytes_per_cycle = 100, .gm_read_latency_cycles = 0, .gm_write_latency_cycles = 0,
          .dma_granule_bytes = 32, .fix_gm_granule_bytes = 512, .fix_gm_min_request_bytes = 128, .hbm_bytes_per_cycle = 100,
          .l2_bytes_per_cycle = 1000, .l2_bytes = 1 << 20, .l2_line_bytes = 128, .issue_cycles = 0, .launch_us = 0,
          .core_start_us = 0, .unit_flag_bytes = 512};
}

nm::Work cycles(double c) { return {.cycles = c}; }

// GM of `bytes` from a 4 KiB aligned start (whole L2 lines and granules).
struct Gm {
  explicit Gm(size_t bytes) : store(bytes + 4096) {}
  const uint8_t* at(size_t offset) const {
    return reinterpret_cast<const uint8_t*>((reinterpret_cast<uintptr_t>(store.data()) + 4095) / 4096 * 4096) + offset;
  }
  std::vector<uint8_t> store;
};

TEST(NpuModelTiming, PipesRunInParallelAndEachInOrder) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  nm::CoreTiming core(k, &mem, true);
  core.instruction(kMte1, "load", cycles(100));
  core.instruction(kM, "mad", cycles(300));
  core.instruction(kMte1, "load", cycles(100));
  EXPECT_DOUBLE_EQ(core.end(), 300);  // the second load overlaps the Mmad, after the first load
  ASSERT_EQ(core.trace().size(), 3u);
  EXPECT_DOUBLE_EQ(core.trace()[2].start, 100);
  EXPECT_DOUBLE_EQ(core.stats()[kMte1].busy, 200);
}

TEST(NpuModelTiming, AWaitHoldsItsPipeUntilTheSetPipeHasDone) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  nm::CoreTiming core(k, &mem);
  core.instruction(kMte1, "load", cycles(100));
  core.set_flag(kMte1, kM, 0);
  core.instruction(kMte1, "load", cycles(100));  // after the set: the flag does not wait for it
  core.wait_flag(kMte1, kM, 0);
  core.instruction(kM, "mad", cycles(50));
  EXPECT_DOUBLE_EQ(core.end(), 200);
  EXPECT_DOUBLE_EQ(core.stats()[kM].flag_wait, 100);
  // Flags of one event pair are taken in the order they were set.
  core.set_flag(kM, kMte1, 1);  // set at 150
  core.instruction(kM, "mad", cycles(500));
  core.set_flag(kM, kMte1, 1);  // set at 650
  core.wait_flag(kM, kMte1, 1);
  core.instruction(kMte1, "load", cycles(10));
  core.wait_flag(kM, kMte1, 1);
  core.instruction(kMte1, "load", cycles(10));
  EXPECT_DOUBLE_EQ(core.end(), 660);
}

TEST(NpuModelTiming, APipeAllBarrierHoldsTheScalarUnit) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  nm::CoreTiming core(k, &mem);
  core.instruction(kM, "mad", cycles(400));
  core.barrier(6);  // PIPE_ALL
  core.instruction(kMte1, "load", cycles(10));
  EXPECT_DOUBLE_EQ(core.end(), 410);
}

TEST(NpuModelTiming, ACrossCoreWaitCarriesTheSettersTime) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  nm::CoreTiming aic(k, &mem), aiv(k, &mem);
  aic.instruction(kFix, "fixpipe", cycles(700));
  const double set = aic.set_time(kFix);
  EXPECT_DOUBLE_EQ(set, 700);
  aiv.wait_until(kV, set);
  aiv.instruction(kV, "vadd", cycles(1));
  EXPECT_DOUBLE_EQ(aiv.end(), 701);
  aiv.wait_until(kS, 1000);  // a wait on the scalar unit holds every later instruction
  aiv.instruction(kMte2, "load", cycles(5));
  EXPECT_DOUBLE_EQ(aiv.end(), 1005);
}

TEST(NpuModelTiming, AUnitFlaggedFixpipeFollowsItsMmadByOneBlock) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  nm::CoreTiming core(k, &mem);
  std::vector<uint8_t> l0c(4096);
  nm::Work mad{.cycles = 1000, .unit_flag = 3, .l0c = l0c.data(), .l0c_bytes = l0c.size()};
  nm::Work fix{.cycles = 100, .unit_flag = 3, .l0c = l0c.data(), .l0c_bytes = l0c.size()};
  core.instruction(kM, "mad", mad);
  core.instruction(kFix, "fixpipe", fix);
  // Starts 512 B (4 cycles at 128 B/cycle) after the Mmad, ends 4 cycles after it.
  EXPECT_DOUBLE_EQ(core.end(), 1004);
  // Without a unit flag the Fixpipe does not wait (the kernel's flags order it).
  nm::CoreTiming plain(k, &mem);
  plain.instruction(kM, "mad", cycles(1000));
  plain.instruction(kFix, "fixpipe", cycles(100));
  EXPECT_DOUBLE_EQ(plain.end(), 1000);
}

TEST(NpuModelTiming, ReadsMissThenHitTheL2) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  const Gm gm(64 * 1024);
  const nm::GmSpan span{.p = gm.at(0), .row_bytes = 1024, .rows = 10, .row_stride = 1024};
  // 10 KiB at the core's 100 B/cycle (HBM's 100 B/cycle too): 102.4 cycles.
  EXPECT_NEAR(mem.transfer(0, span, 0, 100), 102.4, 1e-9);
  EXPECT_EQ(mem.stats().hbm_read, 10240u);
  EXPECT_NEAR(mem.transfer(200, span, 0, 1000), 200 + 10.24, 1e-9);  // hits at the L2's 1000 B/cycle
  EXPECT_EQ(mem.stats().l2_hit, 10240u);
}

TEST(NpuModelTiming, CoresShareHbmBandwidth) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  const Gm gm(1 << 20);
  const nm::GmSpan a{.p = gm.at(0), .row_bytes = 25600}, b{.p = gm.at(512 * 1024), .row_bytes = 25600};
  EXPECT_NEAR(mem.transfer(0, a, 0, 100), 256, 1e-9);
  // A second core's misses at the same time get what the first left: none until cycle 256.
  EXPECT_NEAR(mem.transfer(0, b, 0, 100), 512, 1e-9);
}

TEST(NpuModelTiming, AMissFillsItsWholeLineFromHbm) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  const Gm gm(1 << 16);
  // 192 B from 64 B into a line: two lines missed, HBM moves both (256 B) for the request's 192.
  mem.transfer(0, nm::GmSpan{.p = gm.at(64), .row_bytes = 192}, 0, 100);
  EXPECT_EQ(mem.stats().hbm_read, 256u);
  // The first line's other 64 B are in the L2 now: a hit, nothing more from HBM.
  mem.transfer(10, nm::GmSpan{.p = gm.at(0), .row_bytes = 64}, 0, 100);
  EXPECT_EQ(mem.stats().hbm_read, 256u);
  EXPECT_EQ(mem.stats().l2_hit, 64u);
}

TEST(NpuModelTiming, AnAtomicAddFillsItsMissedLinesFromHbm) {
  const TimingConstants k = constants();
  const Gm gm(1 << 16);
  const nm::GmSpan out{.p = gm.at(0), .row_bytes = 1024, .write = true};
  // A plain write of lines not in the L2 goes into the L2 at 1000 B/cycle and reads nothing.
  nm::MemoryTiming plain(k);
  EXPECT_NEAR(plain.transfer(0, out, 0, 1000), 1.024, 1e-9);
  EXPECT_EQ(plain.stats().hbm_read, 0u);
  // An atomic add sums with GM's bytes: its missed lines come from HBM first (100 B/cycle).
  nm::MemoryTiming atomic(k);
  EXPECT_NEAR(atomic.transfer(0, out, 0, 1000, true), 10.24, 1e-9);
  EXPECT_EQ(atomic.stats().hbm_read, 1024u);
  // Adding again to lines the L2 holds (or to lines just written) reads nothing more.
  atomic.transfer(20, out, 0, 1000, true);
  plain.transfer(20, out, 0, 1000, true);
  EXPECT_EQ(atomic.stats().hbm_read, 1024u);
  EXPECT_EQ(plain.stats().hbm_read, 0u);
}

TEST(NpuModelTiming, UnalignedRowsCountWholeGranules) {
  const TimingConstants k = constants();
  nm::MemoryTiming mem(k);
  const Gm gm(1 << 16);
  // A 1024 B row 8 B past a 512 B boundary: three 512 B granules for the Fixpipe, 33 blocks of 32 B for a DMA.
  const nm::GmSpan row{.p = gm.at(8), .row_bytes = 1024, .write = true};
  mem.transfer(0, row, 512, 1000);
  EXPECT_EQ(mem.stats().l2_write, 1536u);
  mem.transfer(0, row, 0, 1000);
  EXPECT_EQ(mem.stats().l2_write, 1536u + 1056u);
}

TEST(NpuModelTiming, WritesStayInTheL2UntilEvicted) {
  const TimingConstants k = constants();
  const Gm gm(4 << 20);
  const nm::GmSpan out{.p = gm.at(0), .row_bytes = 10240, .write = true};
  const nm::GmSpan in{.p = gm.at(1 << 20), .row_bytes = 1 << 20}, more{.p = gm.at(3 << 20), .row_bytes = 10240};
  // 10 KiB written twice: the L2 takes it at the core's rate, HBM nothing (the dirty lines stay).
  nm::MemoryTiming mem(k);
  EXPECT_NEAR(mem.transfer(0, out, 0, 100), 102.4, 1e-9);
  mem.transfer(200, out, 0, 100);
  EXPECT_EQ(mem.stats().l2_write, 20480u);
  EXPECT_EQ(mem.stats().hbm_write, 0u);
  // Reading 1 MiB more evicts them: each dirty line is written back once, its HBM bandwidth taken from then
  // on, so that another read at the same time ends later than without the writes.
  mem.transfer(400, in, 0, 100);
  EXPECT_EQ(mem.stats().hbm_write, 10240u);
  nm::MemoryTiming clean(k);
  clean.transfer(400, in, 0, 100);
  EXPECT_EQ(clean.stats().hbm_write, 0u);
  EXPECT_GT(mem.transfer(400, more, 0, 100), clean.transfer(400, more, 0, 100) + 50);
}

TEST(NpuModelTiming, WriteRequestsAreAlignedBlocks) {
  // 1024 B 512 B aligned: two 512 B requests; 256 B past: 256 + 512 + 256; 8 B past: 128 (rounded up), 128,
  // 256, 512, 128 (rounded up).
  EXPECT_EQ(nm::write_requests(4096, 1024, 512, 128), 2u);
  EXPECT_EQ(nm::write_requests(4096 + 256, 1024, 512, 128), 3u);
  EXPECT_EQ(nm::write_requests(4096 + 8, 1024, 512, 128), 5u);
  EXPECT_EQ(nm::write_requests(4096, 100, 512, 128), 1u);
}

TEST(NpuModelTiming, AReadLatencyDelaysCompletionNotThePipe) {
  TimingConstants k = constants();
  k.gm_read_latency_cycles = 500;
  nm::MemoryTiming mem(k);
  nm::CoreTiming core(k, &mem);
  const Gm gm(1 << 16);
  const nm::GmSpan span{.p = gm.at(0), .row_bytes = 3200};  // 25 whole lines
  core.instruction(kMte2, "copy", {.gm = &span});
  core.instruction(kMte2, "copy", {.gm = &span});  // in flight behind the first (32 cycles each)
  EXPECT_DOUBLE_EQ(core.set_time(kMte2), 564);
  EXPECT_DOUBLE_EQ(core.end(), 564);
}

}  // namespace npu_model_timing_test
