// The host (CPU) target seen as an AI Core: each worker thread is one "core".
//   L1  = per-core panel buffer, as large as the CPU's per-core L2;
//   L0A / L0B = operand tiles the micro-kernel streams, a quarter of L2 each. The micro-kernel keeps
//       one register tile's operands hot (l0_k x (8 A rows + 32 B columns) values, 20 KB at
//       l0_k = 256), which fits L1d; larger L0 tiles mean longer K runs per accumulator load and, on
//       small L2s, larger block tiles, so fewer GM -> L1 copies per FLOP (docs/performance/);
//   L0C = the fp32 accumulator tile, half of L2 (each micro-kernel's tiles use a share, KernelTiling).
// runtime/host_arch.hpp applies these rules to the caches read at run time; the byte counts below are
// the defaults when the caches cannot be read. The fractal geometry and event-id limits mirror the NPU
// so that kernels validated here respect them.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/cube_format.hpp"

namespace deepgemm_ascend::arch {

struct Host : CubeFormat, MxFormat {
  static constexpr const char* kName = "Host";

  static constexpr uint32_t kDefaultL1dBytes = 48 * 1024;
  static constexpr uint32_t kDefaultL2Bytes = 1024 * 1024;
  static constexpr uint32_t kAmxL0CPerL2 = 2;
  static constexpr uint32_t kL0CPerL2 = kAmxL0CPerL2;  // L0C = L2 / 2: the largest budget of any kernel
  static constexpr uint32_t kL0PerL2 = 4;   // L0A = L0B = L2 / 4
  static constexpr uint32_t kL1Bytes = kDefaultL2Bytes;
  static constexpr uint32_t kL0ABytes = kDefaultL2Bytes / kL0PerL2;
  static constexpr uint32_t kL0BBytes = kDefaultL2Bytes / kL0PerL2;
  static constexpr uint32_t kL0CBytes = kDefaultL2Bytes / kL0CPerL2;
  // Bounds keep a misread cache size from producing useless or absurd buffers.
  static constexpr uint32_t kMinL0Bytes = 16 * 1024, kMaxL0Bytes = 256 * 1024;
  static constexpr uint32_t kMinL1Bytes = 256 * 1024, kMaxL1Bytes = 16 * 1024 * 1024;
  static constexpr uint32_t kUBBytes = 256 * 1024;
  static constexpr uint32_t kBiasTableBytes = 4 * 1024;
  static constexpr uint32_t kFixpipeBytes = 16 * 1024;
  static constexpr uint32_t kL0MxBytes = 4 * 1024;
  static constexpr uint32_t kL0MxAddressDivisor = 16;

  // Host buffers are cache-line aligned; L0 tiles keep the NPU's 512 B / 1 KB rules.
  static constexpr uint32_t kCacheLineBytes = 64;
  static constexpr uint32_t kL1Align = 32;
  static constexpr uint32_t kUBAlign = 32;
  static constexpr uint32_t kL0AAlign = 512;
  static constexpr uint32_t kL0BAlign = 512;
  static constexpr uint32_t kL0CAlign = 1024;
  static constexpr uint32_t kFixpipeSrcAlign = 64;
  static constexpr uint32_t kBiasAlign = 64;
  static constexpr uint32_t kMxFp8OperandAlign = 1024;
  static constexpr uint32_t kMxFp4OperandAlign = 512;

  static constexpr int kMaxBlockDim = 65535;

  // About 0.4 TFLOPS of AVX512-BF16 per core over about 10 GB/s of DRAM bandwidth per core
  // (shared/reference/host_baseline.md: 19.9 GB/s copy bandwidth with 2 threads).
  static constexpr double kRidgeFlopsPerByte = 40.0;
  static constexpr int kSwizzleBand = 3;
  static constexpr bool kCopiesOverlapCompute = false;  // a worker thread packs panels and then computes: copies add to the time
  // Widening one FP8/FP4 operand value to bf16 on its way L1 -> L0 (AVX-512: ~0.75 cycles per value
  // for the widen and the L0B K-pair interleave, at 128 FLOP per cycle), in FLOP of the micro-kernel.
  static constexpr double kWidenFlopsPerValue = 96.0;
  // How each micro-kernel wants its GEMM tiles (docs/performance/ has the measurements per CPU):
  //  * accumulator_traffic_per_l0_step: the score counts the fp32 accumulators loaded and stored once
  //    per L0 K step, which favours long L0 K runs over large tiles. True of the AVX-512 kernel (register
  //    tiles of 8 x 32 values); AMX keeps a 32 x 32 block in tile registers for the whole L0 K run, and the
  //    AVX2 kernel's 6 x 16 register tile loads its 12 accumulator registers once per call against 192 FLOP
  //    per K value: for those two the term would pick tiles smaller than the fastest ones.
  //  * l0c_per_l2 (the L0C tile budget), max_block_mn, max_block_k: AMX runs 512 x 512 tiles with an L0C of
  //    half the L2, and L1 K stages of 128 (the fastest on a 2 MiB-L2 Xeon, against 64, 256 and 512): the
  //    host's copies do not overlap the tile products, so what was copied must still be in L2 when it is
  //    used. The AVX kernels keep the limits they were tuned with.
  struct KernelTiling {
    bool accumulator_traffic_per_l0_step;
    uint32_t l0c_per_l2;
    int64_t max_block_mn, max_block_k;
  };
  static constexpr KernelTiling kAvx512Tiling{true, 4, 256, 512};
  static constexpr KernelTiling kAvx2Tiling{false, 4, 256, 512};
  // The AVX-512F kernel is the AVX2 kernel's scheme on zmm (a 12 x 32 register tile): AVX2's rule.
  static constexpr KernelTiling kAvx512FmaTiling = kAvx2Tiling;
  // The AVX-512F kernel runs by default only where its FMA loop beats AVX2's by this factor (measured once
  // per process, tile::host::fma_width_race): two 512-bit FMA units give about 2x minus the AVX-512 clock drop
  // (more than 1.5x on Ice Lake-class Xeons); parts with one 512-bit unit (Skylake-SP Silver / Bronze) give at
  // most 1x.
  static constexpr double kAvx512MinFmaGain = 1.25;
  static constexpr KernelTiling kAmxTiling{false, kAmxL0CPerL2, 512, 128};
  // The arch-wide values (ArchLimits::of<Host>()) are the largest any kernel may use; host_arch_limits()
  // narrows them to the active kernel's.
  static constexpr bool kAccumulatorTrafficPerL0Step = kAvx512Tiling.accumulator_traffic_per_l0_step;
  static constexpr int64_t kMaxBlockMN = kAmxTiling.max_block_mn;
  static constexpr int64_t kMaxBlockK = kAvx512Tiling.max_block_k;
};

}  // namespace deepgemm_ascend::arch
