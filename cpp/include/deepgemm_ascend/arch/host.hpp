// The host (CPU) target seen as an AI Core: each worker thread is one "core".
//   L1  = per-core panel buffer, as large as the CPU's per-core L2;
//   L0A / L0B = operand tiles the micro-kernel streams, a quarter of L2 each. The micro-kernel keeps
//       one register tile's operands hot (l0_k x (8 A rows + 32 B columns) values, 20 KB at
//       l0_k = 256), which fits L1d; larger L0 tiles mean longer K runs per accumulator load:
//       256x256 register sweeps measured 425 GFLOPS/core at l0_k = 32 and 481 at l0_k = 128;
//       on a 512 KB-L2 Zen 3 (AVX2) a quarter instead of an eighth took the GEMMs from 64x64 tiles to
//       128x128 and made them 16-32 % faster (docs/PERFORMANCE.md);
//   L0C = the fp32 accumulator tile, a quarter of L2.
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
  static constexpr uint32_t kL0CPerL2 = 4;  // L0C = L2 / 4
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
  // The AVX-512 micro-kernel loads and stores its fp32 accumulators from the L0C tile once per L0 K
  // step (register tiles of 8 x 32 values); the score counts that traffic, which favours long L0 K runs
  // over large tiles. Measured per ISA where it was wrong:
  //  * AMX keeps a 32 x 32 block in tile registers for the whole L0 K run and its 1 KB tile loads and
  //    stores overlap the tile products (Xeon with AMX: 256 x 256 tiles beat the 128 x 128 ones the term
  //    picks by 20-27 % on the large benchmark shapes);
  //  * the AVX2 kernel's 6 x 16 register tile loads and stores its 12 accumulator registers once per
  //    call against 192 FLOP per K value of the call (Zen 3: 128 x 256 tiles at l0_k = 128 beat the
  //    128 x 128 ones at l0_k = 256 by 10-14 % on the decode shapes, 0-3 % on the large ones).
  static constexpr bool kAccumulatorTrafficPerL0Step = true;
  static constexpr bool kAmxAccumulatorTrafficPerL0Step = false;
  static constexpr bool kAvx2AccumulatorTrafficPerL0Step = false;
};

}  // namespace deepgemm_ascend::arch
