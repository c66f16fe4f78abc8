// The NPU instruction model's group of cores (npu_model/group.hpp): the cross-core flags of mode 2 as
// "CrossCoreSetFlag(ISASI)" describes them (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/同步控制/
// 核间同步/): after the AIC sets a flag both AIVs may pass their wait; the AIC passes its wait once both
// AIVs have set it. The cores run as threads, one at a time; a wait no core will ever satisfy is a
// deadlock, reported with the waits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "deepgemm_ascend/npu_model/group.hpp"

namespace nm = deepgemm_ascend::npu_model;

TEST(NpuModelGroup, Mode2FlagsCountPerVectorCore) {
  nm::CrossCoreFlags f;
  EXPECT_FALSE(f.can_wait(0, 3));
  EXPECT_EQ(f.set(-1, 3), "");  // AIC -> both AIVs
  EXPECT_TRUE(f.can_wait(0, 3));
  EXPECT_TRUE(f.can_wait(1, 3));
  f.take(0, 3);
  EXPECT_FALSE(f.can_wait(0, 3));
  EXPECT_TRUE(f.can_wait(1, 3));
  EXPECT_EQ(f.set(0, 5), "");  // AIV0 -> AIC: the AIC needs AIV1 too
  EXPECT_FALSE(f.can_wait(-1, 5));
  EXPECT_EQ(f.set(1, 5), "");
  EXPECT_TRUE(f.can_wait(-1, 5));
  f.take(-1, 5);
  EXPECT_FALSE(f.can_wait(-1, 5));
  EXPECT_EQ(f.left_set(), std::vector<std::string>{"AIC -> AIV1 id 3"});
  EXPECT_NE(f.set(-1, 16).find("outside 0-15"), std::string::npos);
}

// Mode 4 ("CrossCoreWaitFlag(ISASI)", flagId constraints, and "asc_sync_intra_arrive": the AIC's ids 0-15
// are AIV0's 0-15, its 16-31 AIV1's 0-15; a set reaches one core; a 4-bit counter per id).
TEST(NpuModelGroup, Mode4FlagsReachOneCore) {
  nm::IntraBlockFlags f;
  EXPECT_EQ(f.set(-1, 3), "");  // AIC id 3 -> AIV0 id 3 only
  EXPECT_TRUE(f.can_wait(0, 3));
  EXPECT_FALSE(f.can_wait(1, 3));
  f.take(0, 3);
  EXPECT_EQ(f.set(-1, 19), "");  // AIC id 19 -> AIV1 id 3
  EXPECT_FALSE(f.can_wait(0, 3));
  EXPECT_TRUE(f.can_wait(1, 3));
  f.take(1, 3);
  EXPECT_EQ(f.set(0, 5), "");  // AIV0 id 5 -> AIC id 5: no need for AIV1 (unlike mode 2)
  EXPECT_TRUE(f.can_wait(-1, 5));
  EXPECT_FALSE(f.can_wait(-1, 21));
  f.take(-1, 5);
  EXPECT_EQ(f.set(1, 5), "");  // AIV1 id 5 -> AIC id 21
  EXPECT_FALSE(f.can_wait(-1, 5));
  EXPECT_TRUE(f.can_wait(-1, 21));
  EXPECT_EQ(f.left_set(), std::vector<std::string>{"AIV1 -> AIC id 21"});
  f.take(-1, 21);
  EXPECT_TRUE(f.left_set().empty());
  // ids: 0-31 on the AIC, 0-15 on an AIV
  EXPECT_NE(f.set(0, 16).find("outside an AIV's 0-15"), std::string::npos);
  EXPECT_NE(f.set(-1, 32).find("outside the AIC's 0-31"), std::string::npos);
  EXPECT_EQ(nm::IntraBlockFlags::check_id(-1, 31), "");
  // the counter holds 15 counts
  for (int i = 0; i < 15; ++i) ASSERT_EQ(f.set(-1, 20), "");
  EXPECT_NE(f.set(-1, 20).find("16 times"), std::string::npos);
}

TEST(NpuModelGroup, CoresTakeTurnsAtTheirWaits) {
  nm::CrossCoreFlags f;
  std::vector<std::string> log;
  int current = -1;
  nm::GroupScheduler s(3, [&](int c) { current = c; });
  s.run([&](int c) {
    if (c == 0) {  // the AIC: produce twice, each time after both AIVs released the slot
      for (int i = 0; i < 2; ++i) {
        if (i > 0) ASSERT_TRUE(s.wait_until(c, [&] { return f.can_wait(-1, 2); }, "AIC waits id 2"));
        if (i > 0) f.take(-1, 2);
        log.push_back("AIC sets " + std::to_string(i));
        ASSERT_EQ(f.set(-1, 0), "");
      }
      return;
    }
    const int sub = c - 1;
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(s.wait_until(c, [&] { return f.can_wait(sub, 0); }, "AIV waits id 0"));
      EXPECT_EQ(current, c);
      f.take(sub, 0);
      log.push_back("AIV" + std::to_string(sub) + " got " + std::to_string(i));
      if (i == 0) ASSERT_EQ(f.set(sub, 2), "");
    }
  });
  EXPECT_EQ(s.deadlock(), "");
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[0], "AIC sets 0");
  EXPECT_TRUE(f.left_set().empty());
}

TEST(NpuModelGroup, AWaitNoCoreWillSatisfyIsADeadlock) {
  nm::CrossCoreFlags f;
  nm::GroupScheduler s(3, [](int) {});
  std::vector<int> passed(3, -1);
  s.run([&](int c) {
    if (c == 0) passed[0] = s.wait_until(c, [&] { return f.can_wait(-1, 7); }, "core 0 (AIC) waits id 7 on FIX");
    else passed[size_t(c)] = s.wait_until(c, [&] { return f.can_wait(c - 1, 4); }, "AIV waits id 4");
  });
  EXPECT_NE(s.deadlock().find("core 0 (AIC) waits id 7 on FIX"), std::string::npos) << s.deadlock();
  EXPECT_EQ(passed, (std::vector<int>{0, 0, 0}));
}

// Modes 0 and 1 ("CrossCoreSetFlag(ISASI)": mode 0 syncs every AIV (or AIC) of the launch, mode 1 the two
// AIVs of a core; a wait passes once every participating core has set the id; a 4-bit counter per id).
TEST(NpuModelGroup, BarrierCountsOnceEveryCoreHasSet) {
  nm::BarrierFlags f(3);
  EXPECT_EQ(f.set(0, 8), "");
  EXPECT_EQ(f.set(2, 8), "");
  for (int c = 0; c < 3; ++c) EXPECT_FALSE(f.can_wait(c, 8));  // core 1 has not set it yet
  EXPECT_NE(f.set(0, 8).find("set again"), std::string::npos);
  EXPECT_EQ(f.set(1, 8), "");
  for (int c = 0; c < 3; ++c) EXPECT_TRUE(f.can_wait(c, 8));  // one count for each core
  EXPECT_FALSE(f.can_wait(0, 9));
  f.take(0, 8);
  f.take(1, 8);
  EXPECT_FALSE(f.can_wait(0, 8));
  const auto name = [](int c) { return "core " + std::to_string(c); };
  EXPECT_EQ(f.left_set(name), std::vector<std::string>{"core 2 id 8 (not waited)"});
  f.take(2, 8);
  EXPECT_EQ(f.set(1, 3), "");
  EXPECT_EQ(f.left_set(name), std::vector<std::string>{"core 1 id 3 (set, but not by every participating core)"});
  EXPECT_NE(f.set(0, 16).find("outside 0-15"), std::string::npos);
  nm::BarrierFlags one(1);
  for (int i = 0; i < 15; ++i) ASSERT_EQ(one.set(0, 5), "");
  EXPECT_NE(one.set(0, 5).find("16th"), std::string::npos);
}

// A barrier across the cores a scheduler runs: no core passes its wait before the last one has set.
TEST(NpuModelGroup, BarrierHoldsEveryCoreUntilTheLastSets) {
  constexpr int kCores = 6;
  nm::BarrierFlags f(kCores);
  nm::GroupScheduler s(kCores, [](int) {});
  int arrived = 0;
  std::vector<int> seen(kCores, -1);
  s.run([&](int c) {
    ++arrived;
    ASSERT_EQ(f.set(c, 8), "");
    ASSERT_TRUE(s.wait_until(c, [&] { return f.can_wait(c, 8); }, "barrier"));
    f.take(c, 8);
    seen[size_t(c)] = arrived;
  });
  EXPECT_EQ(s.deadlock(), "");
  EXPECT_EQ(seen, std::vector<int>(kCores, kCores));
}
