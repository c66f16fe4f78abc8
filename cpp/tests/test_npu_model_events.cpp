// The NPU instruction model's event checks (npu_model/events.hpp), after the SetFlag/WaitFlag rules of
// the AscendC documentation: the double set the documentation gives as its example of undefined
// behaviour, a wait with no set, a flag left set at the end; a balanced ring passes.
#include <gtest/gtest.h>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/events.hpp"

namespace nm = deepgemm_ascend::npu_model;
using deepgemm_ascend::core::Error;

TEST(NpuModelEvents, ABalancedTwoStageRingPasses) {
  nm::EventModel e("ring", "core 0");
  for (int id : {0, 1}) e.set_flag("M", "MTE1", id);  // both stages free
  for (int step = 0; step < 5; ++step) {
    const int id = step % 2;
    e.wait_flag("M", "MTE1", id);
    e.set_flag("MTE1", "M", id);
    e.wait_flag("MTE1", "M", id);
    e.set_flag("M", "MTE1", id);
  }
  for (int id : {0, 1}) e.wait_flag("M", "MTE1", id);
  EXPECT_NO_THROW(e.finish());
}

TEST(NpuModelEvents, DoubleSetWaitWithoutSetAndLeftoverFlagsAreErrorsNamingTheEvent) {
  nm::EventModel e("gemm_bf16", "core 3");
  e.set_flag("M", "MTE1", 0);
  try {
    e.set_flag("M", "MTE1", 0);
    FAIL() << "a double set passed";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("kernel gemm_bf16, core 3: event id set twice"), std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("M -> MTE1, event id 0"), std::string::npos) << err.what();
  }
  EXPECT_THROW(e.wait_flag("MTE2", "MTE1", 1), Error);
  EXPECT_THROW(e.finish(), Error);  // M -> MTE1 id 0 is still set
  e.wait_flag("M", "MTE1", 0);
  EXPECT_NO_THROW(e.finish());
}
