// The constants of an NPU's timing model (npu_model/timing.hpp): the cube's rates per operand type, the
// pipes' bandwidths and fixed costs, the memory system, the clock and the launch. An arch file gives the
// values, each with its source or marked as an assumption.
#pragma once

#include <cstdint>

namespace deepgemm_ascend::arch {

struct TimingConstants {
  // The clock of the AI cores and the cores of a launch.
  double clock_ghz = 0;
  int cube_cores = 0;
  int vector_cores_per_cube = 0;

  // The cube: one cycle multiplies a 16 x k x 16 block, k by operand type (Mmad / MmadMx).
  int mmad_k_fp16 = 0;    // fp16 / bf16
  int mmad_k_fp32 = 0;    // fp32 (and HF32)
  int mmad_k_8bit = 0;    // int8, fp8, hif8, MX fp8
  int mmad_k_mx_fp4 = 0;  // MX fp4 (two values a byte)
  double mmad_fixed_cycles = 0;  // one Mmad's start and drain

  // The cube core's copies: L1 -> L0A / L0B (MTE1) and L0C out (FIX), bytes per cycle and a fixed cost each.
  double mte1_bytes_per_cycle = 0;
  double mte1_transposed_l0b_bytes_per_cycle = 0;
  double mte1_mx_scale_bytes_per_cycle = 0;  // L1 -> L0A_MX / L0B_MX
  double mte1_fixed_cycles = 0;
  // L0C out: fp32 bytes a cycle; a 16- or 8-bit output moves fix_bytes_per_cycle / 2 values a cycle.
  double fix_bytes_per_cycle = 0;
  double fix_ub_bytes_per_cycle = 0;  // L0C -> UB
  double fix_fixed_cycles = 0;

  // The vector core: a micro-op moves or computes one 256 B register per cycle.
  double vector_cycles_per_op = 0;

  // A DMA between GM and a core (MTE2 in, MTE3 and FIX out): per core bytes per cycle, the latency of a
  // read, and the granule a transfer is counted in (a burst's bytes rounded out to it at both ends).
  double dma_core_bytes_per_cycle = 0;
  double gm_read_latency_cycles = 0;
  double gm_write_latency_cycles = 0;
  uint32_t dma_granule_bytes = 0;
  // The Fixpipe's GM writes: requests of naturally aligned blocks from fix_gm_granule_bytes (the largest) down
  // to fix_gm_min_request_bytes, a partial one rounded up; each takes the write port as long as a full one.
  uint32_t fix_gm_granule_bytes = 0;
  uint32_t fix_gm_min_request_bytes = 0;

  // The memory system all cores share: HBM and the L2 in front of it.
  double hbm_bytes_per_cycle = 0;
  double l2_bytes_per_cycle = 0;
  uint64_t l2_bytes = 0;
  uint32_t l2_line_bytes = 0;

  // The scalar unit: cycles to issue one instruction into its pipe's queue.
  double issue_cycles = 0;
  // A launch's start and end (kernel dispatch and completion), microseconds.
  double launch_us = 0;
  // A core's start: from the launch to its first instruction's issue, microseconds.
  double core_start_us = 0;
  // The Fixpipe of a unit-flagged Mmad's L0C starts this many bytes of fp32 output after the Mmad starts.
  uint32_t unit_flag_bytes = 0;
};

}  // namespace deepgemm_ascend::arch
