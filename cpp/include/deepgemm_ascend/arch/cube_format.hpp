// The cube's data formats and synchronisation limits: the same on every Ascend arch here, and mirrored
// by the host cube so that kernels validated on the host respect them. This is their one home; the
// Arch tags inherit them (shared/reference/ascend950.md §3, §5, §6).
#pragma once

#include <cstdint>

#include "deepgemm_ascend/core/macros.hpp"

namespace deepgemm_ascend::arch {

struct CubeFormat {
  // A fractal is 16 rows x 32 bytes (C0); the L0C fractal is 16 x 16 fp32 (§3, §4).
  static constexpr uint32_t kC0Bytes = 32;
  static constexpr uint32_t kFractalRows = 16;
  static constexpr uint32_t kFractalBytes = kFractalRows * kC0Bytes;
  static constexpr uint32_t kL0CFractalBytes = 1024;
  static constexpr int kMmadMaxDim = 4095;  // m, n, k of one Mmad (§4)
  // The largest GEMM tile the tiler considers: block_m / block_n, and the K of one L1 stage.
  static constexpr int64_t kMaxBlockMN = 256;
  static constexpr int64_t kMaxBlockK = 512;
  // Back-to-back Mmads on fewer output fractals than this need a PIPE_M barrier between them; counted
  // as (m / 16) * (n / 16) with integer division of the actual m and n (ISA Mmad).
  static constexpr uint32_t kMmadBarrierFreeFractals = 10;

  // Event ids per (src, dst) event type; the first kUserEventIds are the kernel's (§6).
  static constexpr int kEventIds = 8;
  static constexpr int kUserEventIds = 6;
  static constexpr int kCrossCoreFlags = 16;
  static constexpr int kCrossCoreMaxPending = 15;
};

// A mix kernel's tile goes from L0C to the two vector cores of its cube core split by rows (the Fixpipe's
// dual destination, split M): the first vector_split_rows(rows) = ceil(rows / 2) rows to the first, the
// rest to the second. The cube side (its Fixpipe) and the vector side (the rows each core owns) read it here.
DGA_HOST_DEVICE constexpr int64_t vector_split_rows(int64_t rows) { return (rows + 1) / 2; }

// MX (microscaled) operands: one UE8M0 scale per 32 K values, two K-adjacent scales per 16-bit
// element, K tiles in multiples of 64 (§5).
struct MxFormat {
  static constexpr uint32_t kMxBlockK = 32;
  static constexpr uint32_t kMxScalesPerPack = 2;
  static constexpr uint32_t kMxBaseK = kMxBlockK * kMxScalesPerPack;
};

// An arch without MX.
struct NoMxFormat {
  static constexpr uint32_t kMxBlockK = 0;
  static constexpr uint32_t kMxScalesPerPack = 0;
  static constexpr uint32_t kMxBaseK = 0;
};

}  // namespace deepgemm_ascend::arch
