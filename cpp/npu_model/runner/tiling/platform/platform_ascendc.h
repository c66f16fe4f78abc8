// platform_ascendc's PlatformAscendCManager as AscendC host programs query it (core counts, the SoC), for
// running such a program on the instruction model (npu_run.py): the Ascend 950's counts from the arch file.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/ascend950.hpp"

namespace platform_ascendc {

enum class SocVersion { ASCEND950 };

class PlatformAscendC {
 public:
  uint32_t GetCoreNumAic() const { return uint32_t(deepgemm_ascend::arch::Ascend950::kDefaultCubeCores); }
  uint32_t GetCoreNumAiv() const {
    return GetCoreNumAic() * uint32_t(deepgemm_ascend::arch::Ascend950::kVectorCoresPerCube);
  }
  uint32_t GetCoreNum() const { return GetCoreNumAiv(); }
  uint32_t GetCoreNumVector() const { return GetCoreNumAiv(); }
  SocVersion GetSocVersion() const { return SocVersion::ASCEND950; }
};

class PlatformAscendCManager {
 public:
  static PlatformAscendC* GetInstance() {
    static PlatformAscendC p;
    return &p;
  }
  static PlatformAscendC* GetInstance(const char*) { return GetInstance(); }
};

}  // namespace platform_ascendc
