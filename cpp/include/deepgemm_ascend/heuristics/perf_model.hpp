// Performance model of a GEMM on an NPU: per core, waves of output tiles; per tile, the cube, the
// GM -> L1 copies (MTE2, fed from L2), the L1 -> L0 copies (MTE1) and, for FP32 block scales, the vector
// cores' promotion of each K block's product overlap, so a tile costs the slowest of them; the whole GEMM
// also cannot beat moving its unique bytes through HBM. Used as
// the 950 heuristics' score and to predict throughput (docs/PERFORMANCE.md compares it with the
// published 950DT figures).
#pragma once

#include <cstdint>

#include "deepgemm_ascend/heuristics/gemm_config.hpp"

namespace deepgemm_ascend::heuristics {

struct PerfModel {
  int cores = 0;  // 0: no model for this arch
  double clock_ghz = 0;
  double cube_flops_per_cycle_16 = 0, cube_flops_per_cycle_8 = 0, cube_flops_per_cycle_4 = 0;
  double l2_bytes_per_cycle = 0;   // whole chip
  double hbm_bytes_per_cycle = 0;  // whole chip
  double l1_to_l0_bytes_per_cycle = 0;  // per core
  double vector_bytes_per_cycle = 0;    // per vector core: one register of this many bytes a micro-op
  int vector_cores_per_cube = 0;

  template <class Arch>
  static constexpr PerfModel of() {
    if constexpr (requires { Arch::kPerfClockGhz; }) {
      return {.cores = Arch::kDefaultCubeCores, .clock_ghz = Arch::kPerfClockGhz,
              .cube_flops_per_cycle_16 = Arch::kCubeFp16FlopsPerCycle,
              .cube_flops_per_cycle_8 = Arch::kCubeFp8FlopsPerCycle,
              .cube_flops_per_cycle_4 = Arch::kCubeFp4FlopsPerCycle, .l2_bytes_per_cycle = Arch::kPerfL2BytesPerCycle,
              .hbm_bytes_per_cycle = Arch::kPerfHbmBytesPerCycle,
              .l1_to_l0_bytes_per_cycle = Arch::kL1ToL0BytesPerCycle,
              .vector_bytes_per_cycle = Arch::kVectorBytesPerCycle,
              .vector_cores_per_cube = Arch::kVectorCoresPerCube};
    } else {
      return {};
    }
  }
};

struct Prediction {
  double seconds = 0, tflops = 0;
  double cube_cycles = 0, mte2_cycles = 0, mte1_cycles = 0, vector_cycles = 0;  // per core
  double per_core_cycles = 0;  // the slowest of the above, with the pipeline's fill
  double hbm_floor_cycles = 0;  // whole GEMM
  const char* bound = "";  // "cube", "mte2", "mte1", "vector" or "hbm"
};

// The promotion's micro-ops per register of a K block's fp32 product (kernel/gemm_promotion.hpp, two K
// blocks at a time): load the accumulator, load each product and multiply-add it, store the accumulator.
inline constexpr double kPromotionOpsPerRegister = 3.0;

Prediction predict_gemm(const GemmDesc& d, const GemmTiling& t, const PerfModel& p);

}  // namespace deepgemm_ascend::heuristics
