// Ascend 950PR / 950DT AI Core (NPU arch 3510, target dav-3510).
// Every number is taken from shared/reference/ascend950.md; the section is named next to it.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/cube_format.hpp"

namespace deepgemm_ascend::arch {

struct Ascend950 : CubeFormat, MxFormat {
  static constexpr const char* kName = "Ascend950";
  static constexpr int kNpuArch = 3510;            // §1 __NPU_ARCH__
  static constexpr const char* kTarget = "dav-3510";

  // On-chip buffers in bytes (§3).
  static constexpr uint32_t kL1Bytes = 512 * 1024;
  static constexpr uint32_t kL0ABytes = 64 * 1024;
  static constexpr uint32_t kL0BBytes = 64 * 1024;
  static constexpr uint32_t kL0CBytes = 256 * 1024;
  static constexpr uint32_t kUBBytes = 248 * 1024;         // usable by default (256 KB total)
  static constexpr uint32_t kBiasTableBytes = 4 * 1024;
  static constexpr uint32_t kFixpipeBytes = 16 * 1024;      // CATLASS; asc-devkit says 4 KB
  static constexpr uint32_t kL0MxBytes = 4 * 1024;          // L0A_MX / L0B_MX each
  static constexpr uint32_t kL0MxAddressDivisor = 16;       // MX address = L0A/L0B address / 16

  // Start-address alignment in bytes (§3).
  static constexpr uint32_t kL1Align = 32;
  static constexpr uint32_t kUBAlign = 32;
  static constexpr uint32_t kL0AAlign = 512;
  static constexpr uint32_t kL0BAlign = 512;
  static constexpr uint32_t kL0CAlign = 1024;   // Mmad destination
  static constexpr uint32_t kFixpipeSrcAlign = 64;
  static constexpr uint32_t kBiasAlign = 64;
  static constexpr uint32_t kMxFp8OperandAlign = 1024;
  static constexpr uint32_t kMxFp4OperandAlign = 512;

  // Cores (§2): the count is not documented; 64 vector cores at 1:2 suggests 32 cube cores.
  static constexpr int kDefaultCubeCores = 32;
  static constexpr int kVectorCoresPerCube = 2;
  static constexpr int kMaxBlockDim = 65535;

  // Rates (§2, §9).
  static constexpr int kCubeFp16FlopsPerCycle = 8192;
  static constexpr int kCubeInt8OpsPerCycle = 16384;
  static constexpr int kVectorBytesPerCycle = 256;
  static constexpr uint32_t kVectorRegBytes = 256;  // §3: 32 vector registers of 256 B per AIV
  static constexpr int kL1ToL0BytesPerCycle = 256;
  // Declared ceilings, derived from DESIGN.md: 431 TFLOPS BF16 is 99.8 % of the declared ceiling;
  // FP8 doubles it.
  static constexpr double kPeakBf16Tflops = 432.0;
  static constexpr double kPeakFp8Tflops = 864.0;
  // Compute-to-memory balance used by the heuristics' cost model. [assumed] The 950's HBM bandwidth is
  // not published (§9); 200 FLOP/byte is a placeholder until measured with GetCoreMemBw.
  static constexpr double kRidgeFlopsPerByte = 200.0;
  // Performance model (heuristics/perf_model.hpp). The MX FP8 / FP4 cube rates are not published (§9):
  // [assumed] the documented int8 rate for both. [derived] the clock from the BF16 ceiling: 432 TFLOPS /
  // (32 cores x 8192 FLOP/cycle) = 1.648 GHz. [assumed] HBM = BF16 peak / kRidgeFlopsPerByte and L2 = 4x
  // HBM, placeholders until GetCoreMemBw is read on a device.
  static constexpr int kCubeFp8FlopsPerCycle = kCubeInt8OpsPerCycle;
  static constexpr int kCubeFp4FlopsPerCycle = kCubeInt8OpsPerCycle;
  static constexpr double kPerfClockGhz = kPeakBf16Tflops * 1e3 / (kDefaultCubeCores * kCubeFp16FlopsPerCycle);
  static constexpr double kPerfHbmBytesPerCycle = kPeakBf16Tflops * 1e3 / kRidgeFlopsPerByte / kPerfClockGhz;
  static constexpr double kPerfL2BytesPerCycle = 4 * kPerfHbmBytesPerCycle;
  static constexpr int kSwizzleBand = 3;
  static constexpr double kWidenFlopsPerValue = 0.0;  // FP8 / FP4 reach the cube as they are (MX mmad)
  static constexpr bool kAccumulatorTrafficPerL0Step = false;  // Mmad accumulates in L0C in place
  static constexpr bool kCopiesOverlapCompute = true;  // MTE2/MTE1 copies run on their own pipes, overlapping the cube  // CATLASS GemmIdentityBlockSwizzle<3, *> (§7)
};

}  // namespace deepgemm_ascend::arch
