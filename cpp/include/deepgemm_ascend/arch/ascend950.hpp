// Ascend 950PR / 950DT AI Core (NPU arch 3510, target dav-3510).
// Every number is taken from shared/reference/ascend950.md; the section is named next to it.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/arch/timing.hpp"

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

  // Cores (§2): the cube cores are kTiming.cube_cores.
  static constexpr int kVectorCoresPerCube = 2;
  static constexpr int kMaxBlockDim = 65535;

  // The timing model's constants (npu_model/timing.hpp). Sources: [CUBE-PERF] asc-devkit
  // docs/zh/api/附录/Cube指令理论性能汇总.md (its tables for NPU arch 3510); [950PR] the asc-devkit's 950PR
  // best-practice READMEs, examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/
  // {matmul_basic_api_high_performance, matmul_mxfp4_basic_api_high_performance}/README.md (clock, cores, L2,
  // HBM, and profiles of Huawei's own 950PR runs); [VEC-PERF] docs/zh/api/附录/Vector指令理论性能汇总.md;
  // [UNITFLAG] docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/Mmad计算/关键特性说明/UnitFlag.md. "derived": computed
  // from those profiles (never from the CATLASS times the model is checked against); "assumed": no document
  // gives it.
  static constexpr TimingConstants kTiming{
      .clock_ghz = 1.65,  // [950PR] "主频为1.65GHz"
      .cube_cores = 32,   // [950PR] Block Num 32, core_num = 32 in its cube-time formula
      .vector_cores_per_cube = 2,
      .mmad_k_fp16 = 16,   // [CUBE-PERF] 3510 table: half / bf16 16 x 16 x 16 a cycle
      .mmad_k_fp32 = 1,    // [CUBE-PERF] float 16 x 16 x 1 (k0 8: K rounds up to 8)
      .mmad_k_8bit = 32,   // [CUBE-PERF] int8, fp8, hif8, MX fp8 16 x 16 x 32
      .mmad_k_mx_fp4 = 64, // [CUBE-PERF] MX fp4 16 x 16 x 64
      // [CUBE-PERF] names a start cost (Δt) without a value; derived: 8192^3 fp16 on the 950PR, cube time
      // 2564.8 us against 2542.0 us of blocks over 4096 Mmads a core = 9 cycles each.
      .mmad_fixed_cycles = 9,
      .mte1_bytes_per_cycle = 256,  // [CUBE-PERF] LoadData 2D L1 -> L0A / L0B
      .mte1_transposed_l0b_bytes_per_cycle = 128,  // [CUBE-PERF] LoadDataWithTranspose L1 -> L0B
      .mte1_mx_scale_bytes_per_cycle = 32,         // [CUBE-PERF] MX scales L1 -> L0A_MX / L0B_MX
      // derived: the same profile's MTE1 time, 828.0 us against 635.5 us at 256 B/cycle, over 8192 LoadData.
      .mte1_fixed_cycles = 39,
      .fix_bytes_per_cycle = 128,     // [CUBE-PERF] Fixpipe fp32 out 32 values a cycle, 16- and 8-bit out 64
      .fix_ub_bytes_per_cycle = 128,  // [CUBE-PERF] L0C -> UB, each destination of the dual mode
      .fix_fixed_cycles = 0,          // assumed: the page gives ΔT without a value
      .vector_cycles_per_op = 1,      // [VEC-PERF] a 256 B register a cycle
      // assumed: a core's DMA as fast as its other documented paths (128 B/cycle); [950PR] the fp16 profile's
      // MTE2 reached 87 B/cycle a core with all 32 cores reading, L2-bound (below).
      .dma_core_bytes_per_cycle = 128,
      .gm_read_latency_cycles = 800,  // assumed: about 0.5 us, a DMA read's first byte (no document)
      .gm_write_latency_cycles = 0,   // assumed: writes are posted
      .dma_granule_bytes = 32,        // a DataCopy block
      // The Fixpipe's GM write requests. The 2201 hardware-constraint page (硬件约束/NPU架构版本2201.md, no 3510
      // page exists): GM transfers are split into 128 B / 256 B / 512 B requests, an unaligned one rounded up;
      // the FlashAttention tuning case (优秀实践/FlashAttention算子性能调优案例.md): a Fixpipe writing a GM
      // address not 512 B aligned made many 128 B requests and the Fixpipe was the bound; CATLASS example 46's
      // page: Fixpipe writes with N unaligned are slow ("Fixpipe Bound"). Assumed for the 950: the same
      // requests, and each takes the Fixpipe's write port as long as a 512 B one (4 cycles at 128 B/cycle), so
      // that small requests cost the Fixpipe, not the memory.
      .fix_gm_granule_bytes = 512,
      .fix_gm_min_request_bytes = 128,
      .hbm_bytes_per_cycle = 1.6e12 / 1.65e9,  // [950PR] "HBM带宽约1.6TB/s"
      .l2_bytes_per_cycle = 5e12 / 1.65e9,     // [950PR] "L2Cache峰值带宽约5TB/s"
      .l2_bytes = 128ull << 20,                // [950PR] "L2Cache大小为128MB"
      .l2_line_bytes = 128,  // assumed: the SIMT GM access granule (3510 architecture page: 128 B)
      // derived: the fp16 profile's scalar time, 144.6 us, over about 25 000 issued instructions a core.
      .issue_cycles = 10,
      // derived: Task Duration minus the AI core time in the 950PR profiles, 0.6-1.1 us.
      .launch_us = 1.0,
      // derived: the fp16 profile's AI core time, 2571.4 us, less its cube time, 2564.8 us: 6.6 us that the cube
      // did not work. This model's own fill (the first 256 KB L1 load from HBM, 2048 cycles at 128 B/cycle plus
      // the read latency, and the first LoadData) and drain (the last 256 x 256 half Fixpipe, 1024 cycles, and
      // its write) take about 3.0 us of it: the rest is the cores' start.
      .core_start_us = 3.6,
      .unit_flag_bytes = 512,  // [UNITFLAG] one flag per 512 B of L0C
  };

  static constexpr int kDefaultCubeCores = kTiming.cube_cores;

  // Rates (§2, §9), from the timing constants: the cube's FLOP per cycle per operand type.
  static constexpr int kCubeFp16FlopsPerCycle = 2 * 16 * 16 * kTiming.mmad_k_fp16;
  static constexpr int kCubeInt8OpsPerCycle = 2 * 16 * 16 * kTiming.mmad_k_8bit;
  static constexpr int kVectorBytesPerCycle = 256;
  static constexpr uint32_t kVectorRegBytes = 256;  // §3: 32 vector registers of 256 B per AIV
  static constexpr int kL1ToL0BytesPerCycle = int(kTiming.mte1_bytes_per_cycle);
  // Peaks at the clock and core count above: 432.5 TFLOPS BF16 (DeepGEMM-Ascend states 432), FP8 twice.
  static constexpr double kPeakBf16Tflops = kTiming.clock_ghz * kTiming.cube_cores * kCubeFp16FlopsPerCycle * 1e-3;
  static constexpr double kPeakFp8Tflops = 2 * kPeakBf16Tflops;
  // The heuristics' compute-to-memory balance: the BF16 peak over the HBM bandwidth.
  static constexpr double kRidgeFlopsPerByte =
      kCubeFp16FlopsPerCycle * kTiming.cube_cores / kTiming.hbm_bytes_per_cycle;
  // The roofline (heuristics/perf_model.hpp) at the same rates: MX FP8 as int8, MX FP4 twice that.
  static constexpr int kCubeFp8FlopsPerCycle = kCubeInt8OpsPerCycle;
  static constexpr int kCubeFp4FlopsPerCycle = 2 * 16 * 16 * kTiming.mmad_k_mx_fp4;
  static constexpr double kPerfClockGhz = kTiming.clock_ghz;
  static constexpr double kPerfHbmBytesPerCycle = kTiming.hbm_bytes_per_cycle;
  static constexpr double kPerfL2BytesPerCycle = kTiming.l2_bytes_per_cycle;
  static constexpr int kSwizzleBand = 3;
  static constexpr double kWidenFlopsPerValue = 0.0;  // FP8 / FP4 reach the cube as they are (MX mmad)
  static constexpr bool kAccumulatorTrafficPerL0Step = false;  // Mmad accumulates in L0C in place
  static constexpr bool kCopiesOverlapCompute = true;  // MTE2/MTE1 copies run on their own pipes, overlapping the cube  // CATLASS GemmIdentityBlockSwizzle<3, *> (§7)
};

}  // namespace deepgemm_ascend::arch
