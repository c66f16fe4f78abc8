// Ascend 910B / 910C AI Core (NPU arch 2201, target dav-2201), from shared/reference/ascend950.md §3.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/cube_format.hpp"

namespace deepgemm_ascend::arch {

struct Ascend910B : CubeFormat, NoMxFormat {
  static constexpr const char* kName = "Ascend910B";
  static constexpr int kNpuArch = 2201;
  static constexpr const char* kTarget = "dav-2201";

  static constexpr uint32_t kL1Bytes = 512 * 1024;
  static constexpr uint32_t kL0ABytes = 64 * 1024;
  static constexpr uint32_t kL0BBytes = 64 * 1024;
  static constexpr uint32_t kL0CBytes = 128 * 1024;
  static constexpr uint32_t kUBBytes = 192 * 1024 - 8 * 1024;  // less the reserved 8 KB
  static constexpr uint32_t kBiasTableBytes = 1 * 1024;
  static constexpr uint32_t kFixpipeBytes = 7 * 1024;           // CATLASS AtlasA2; asc-devkit says 2 KB
  static constexpr uint32_t kL0MxBytes = 0;                     // no MX on 2201
  static constexpr uint32_t kL0MxAddressDivisor = 16;

  static constexpr uint32_t kL1Align = 32;
  static constexpr uint32_t kUBAlign = 32;
  static constexpr uint32_t kL0AAlign = 512;
  static constexpr uint32_t kL0BAlign = 512;
  static constexpr uint32_t kL0CAlign = 1024;
  static constexpr uint32_t kFixpipeSrcAlign = 64;
  static constexpr uint32_t kBiasAlign = 64;
  static constexpr uint32_t kMxFp8OperandAlign = 0;
  static constexpr uint32_t kMxFp4OperandAlign = 0;

  static constexpr int kDefaultCubeCores = 24;   // query at run time; 910B parts differ
  static constexpr int kVectorCoresPerCube = 2;
  static constexpr int kMaxBlockDim = 65535;

  static constexpr int kCubeFp16FlopsPerCycle = 8192;
  static constexpr int kCubeInt8OpsPerCycle = 16384;
  static constexpr int kVectorBytesPerCycle = 256;
  static constexpr int kL1ToL0BytesPerCycle = 128;  // L1->L0B is 128 B/cycle on 2201
  // Not declared in our references: 0 means "unknown" and reports print no efficiency.
  static constexpr double kPeakBf16Tflops = 0.0;
  static constexpr double kPeakFp8Tflops = 0.0;
  static constexpr double kRidgeFlopsPerByte = 200.0;  // [assumed], as for Ascend950
  static constexpr int kSwizzleBand = 3;
  static constexpr double kWidenFlopsPerValue = 0.0;  // no FP8 / FP4 operands on this arch
  static constexpr bool kAccumulatorTrafficPerL0Step = false;  // Mmad accumulates in L0C in place
  static constexpr bool kCopiesOverlapCompute = true;  // copies run on their own pipes
};

}  // namespace deepgemm_ascend::arch
