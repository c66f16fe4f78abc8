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
