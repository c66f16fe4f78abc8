// The NPU instruction model's access checker (npu_model/hazards.hpp) on the rules of "SetFlag/WaitFlag
// (ISASI)" and "PipeBarrier(ISASI)" in the AscendC documentation (cannmirror/asc-devkit, docs/zh/api/SIMD-API/
// 基础API/同步控制/核内同步/): SetFlag completes after every earlier instruction of the source pipe; WaitFlag
// holds the destination pipe's later instructions until the flag is set; PipeBarrier<PIPE_ALL> waits for
// every pipe. Two pipes touching the same bytes with nothing of that kind between them race.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"

namespace nm = deepgemm_ascend::npu_model;

namespace {

constexpr int kS = 0, kM = 2, kMte1 = 3, kMte2 = 4, kAll = 6;
constexpr size_t kL1 = 4096, kL0A = 1024;

struct Core {
  std::vector<uint8_t> l1 = std::vector<uint8_t>(kL1), l0a = std::vector<uint8_t>(kL0A), gm = std::vector<uint8_t>(64);
  nm::Hazards h{"k", "core 3", {{"L1", l1.data(), kL1}, {"L0A", l0a.data(), kL0A}}};

  void write(int pipe, const uint8_t* p, size_t n) { h.instruction(pipe, "w", {{p, n, true}}); }
  void read(int pipe, const uint8_t* p, size_t n) { h.instruction(pipe, "r", {{p, n, false}}); }
  // An MTE1 move of L1 bytes [0, 512) to L0A.
  void load(size_t off = 0) { h.instruction(kMte1, "load", {{l1.data() + off, 512, false}, {l0a.data(), 512, true}}); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const deepgemm_ascend::core::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NpuModelHazards, ReadAfterWriteNeedsAFlagBetween) {
  Core c;
  c.write(kMte2, c.l1.data(), 512);
  const std::string e = error_of([&] { c.load(); });
  EXPECT_NE(e.find("read after write of L1 bytes [0, 32) with pipe MTE2"), std::string::npos) << e;
  EXPECT_NE(e.find("kernel k, core 3: load on pipe MTE1"), std::string::npos) << e;

  Core ok;
  ok.write(kMte2, ok.l1.data(), 512);
  ok.h.set_flag(kMte2, kMte1, 0);
  ok.h.wait_flag(kMte2, kMte1, 0);
  EXPECT_NO_THROW(ok.load());
}

TEST(NpuModelHazards, AFlagOrdersOnlyWhatItsPipeIssuedBeforeTheSet) {
  Core c;
  c.h.set_flag(kMte2, kMte1, 0);
  c.write(kMte2, c.l1.data(), 512);  // after the set: not covered by it
  c.h.wait_flag(kMte2, kMte1, 0);
  EXPECT_NE(error_of([&] { c.load(); }).find("read after write"), std::string::npos);
}

TEST(NpuModelHazards, AFlagOnTheWrongPipeDoesNotOrder) {
  Core c;
  c.write(kMte2, c.l1.data(), 512);
  c.h.set_flag(kMte2, kM, 0);  // the cube pipe is told, the load runs on MTE1
  c.h.wait_flag(kMte2, kM, 0);
  EXPECT_NE(error_of([&] { c.load(); }).find("read after write"), std::string::npos);
}

TEST(NpuModelHazards, WriteAfterReadNeedsTheReaderToRelease) {
  Core c;
  c.h.set_flag(kMte2, kMte1, 0);
  c.h.wait_flag(kMte2, kMte1, 0);
  c.load();
  EXPECT_NE(error_of([&] { c.write(kMte2, c.l1.data() + 64, 32); }).find("write after read of L1 bytes [64, 96)"),
            std::string::npos);
  Core ok;
  ok.load();
  ok.h.set_flag(kMte1, kMte2, 1);
  ok.h.wait_flag(kMte1, kMte2, 1);
  EXPECT_NO_THROW(ok.write(kMte2, ok.l1.data() + 64, 32));
  EXPECT_NO_THROW(ok.write(kMte2, ok.l1.data() + 1024, 32));  // bytes the load did not touch
}

TEST(NpuModelHazards, OrderIsTransitiveThroughAThirdPipe) {
  Core c;
  c.write(kMte2, c.l1.data(), 512);
  c.h.set_flag(kMte2, kS, 0);
  c.h.wait_flag(kMte2, kS, 0);
  c.h.set_flag(kS, kMte1, 0);  // S was ordered after MTE2's write when it set this flag
  c.h.wait_flag(kS, kMte1, 0);
  EXPECT_NO_THROW(c.load());
}

TEST(NpuModelHazards, PipeBarrierAllOrdersEveryPipe) {
  Core c;
  c.write(kMte2, c.l1.data(), 512);
  c.h.barrier(kMte2);  // a barrier of one pipe orders nothing across pipes
  EXPECT_NE(error_of([&] { c.load(); }).find("read after write"), std::string::npos);
  Core ok;
  ok.write(kMte2, ok.l1.data(), 512);
  ok.h.barrier(kAll);
  EXPECT_NO_THROW(ok.load());
}

// On a vector core's checker the group's cube Fixpipe into its UB is another core's pipe: the vector core's
// PipeBarrier<PIPE_ALL> neither holds it nor waits for it ("PipeBarrier(ISASI)": a barrier of the core's
// own pipes); a cross-core flag does.
TEST(NpuModelHazards, PipeBarrierAllDoesNotOrderTheCubeFixpipe) {
  constexpr int kV = 1, kMte3 = 5;
  Core c;
  c.read(kMte3, c.l1.data(), 512);  // the vector core stores its UB to GM (the L1 buffer stands in for UB)
  c.h.barrier(kAll);
  EXPECT_NE(error_of([&] { c.write(nm::kPipeAicFix, c.l1.data(), 512); }).find("write after read"), std::string::npos);
  Core d;
  d.write(nm::kPipeAicFix, d.l1.data(), 512);
  d.h.barrier(kAll);
  EXPECT_NE(error_of([&] { d.read(kV, d.l1.data(), 512); }).find("read after write"), std::string::npos);
  Core ok;  // ordered by a cross-core flag: the cube's Fixpipe after the store's clock
  ok.read(kMte3, ok.l1.data(), 512);
  ok.h.order_after(nm::kPipeAicFix, ok.h.clock_of(kMte3));
  EXPECT_NO_THROW(ok.write(nm::kPipeAicFix, ok.l1.data(), 512));
}

TEST(NpuModelHazards, RunsOutsideTheirBufferAreRefusedAndGmIsNotTracked) {
  Core c;
  const std::string e = error_of([&] { c.write(kMte1, c.l0a.data() + 1000, 32); });
  EXPECT_NE(e.find("writes bytes [1000, 1032) of L0A, which holds 1024 bytes"), std::string::npos) << e;
  Core gm;
  gm.write(kMte2, gm.gm.data(), 64);
  EXPECT_NO_THROW(gm.read(kMte1, gm.gm.data(), 64));
}
