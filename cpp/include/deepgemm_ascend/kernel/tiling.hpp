// The kernel vocabulary of a GEMM's tiles: the tiling (run-time or compile-time), the stage counts, the
// tile order (Swizzle) and the carving of the cube core's buffers, which the kernel templates
// (block_mmad.hpp), the heuristics (heuristics/gemm_heuristics.cpp) and compile-time checks (tiling_fits)
// all read from here. Device code: no heap, no std containers, no host-only headers.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/macros.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"

namespace deepgemm_ascend::kernel {

// Stages of the GEMM's L1 and L0 rings (double buffering): compile-time, the rings' event ids are.
inline constexpr int kL1Stages = 2;
inline constexpr int kL0Stages = 2;
// The MQA logits kernels' L1 ring (npu_mqa_launch.hpp): each tile is a single K step.
inline constexpr int kMqaL1Stages = 4;
inline constexpr int kPagedMqaL1Stages = 8;

// L1 tile = block_m x block_n x block_k; L0 tiles = block_m x l0_k (A) and l0_k x block_n (B).
struct GemmTiling {
  int64_t block_m = 0, block_n = 0, block_k = 0, l0_k = 0;
  int l1_stages = kL1Stages, l0_stages = kL0Stages;
};

// A tiling fixed at compile time (JIT entries, NPU kernels instantiated per config): the kernel
// templates read the same members as constants.
template <int64_t BlockM, int64_t BlockN, int64_t BlockK, int64_t L0K>
struct StaticTiling {
  static constexpr int64_t block_m = BlockM, block_n = BlockN, block_k = BlockK, l0_k = L0K;
  static constexpr int l1_stages = kL1Stages, l0_stages = kL0Stages;
  static_assert(BlockM > 0 && BlockN > 0 && L0K > 0 && BlockK % L0K == 0, "block_k must be a multiple of l0_k");
};

// Tiles are walked in serpentine bands of `band` tile rows (along_m) or tile columns.
struct Swizzle {
  int band = 1;
  bool along_m = true;
};

// What a launch of the GEMM kernel runs with: the tiling, the tile order and the number of blocks.
struct GemmConfig {
  GemmTiling tiling;
  Swizzle swizzle;
  int num_blocks = 1;
};

// Bits of the operands in L1 (as in GM) and in L0A / L0B (after the L0 load's widening), and whether
// UE8M0 scales travel with them (the 950's MX cube).
struct OperandBits {
  int a = 16, b = 16;
  int l0a = 16, l0b = 16;
  bool mx = false;
  bool second_b = false;  // a second B tile in each L1 stage (GemmProblem::b2)
};

// Bytes of the UE8M0 scales of `rows` x k values in L1 or L0: per 16-row block, one 32 B unit (16 rows x
// a K-adjacent pair of scales) per kMxBaseK values of K.
DGA_HOST_DEVICE constexpr int64_t mx_scale_bytes(int64_t rows, int64_t k) {
  return layout::align_up(rows, layout::kFractalRows) * layout::ceil_div(k, int64_t(arch::MxFormat::kMxBaseK)) *
         arch::MxFormat::kMxScalesPerPack;
}

// Bytes of one L0 operand tile of `rows` x k values of `bits` bits (rows padded to whole fractals).
DGA_HOST_DEVICE constexpr int64_t l0_tile_bytes(int64_t rows, int64_t k, int bits) {
  return layout::align_up(rows, layout::kFractalRows) * k * bits / 8;
}

// The cube core's buffers as a GEMM carves them: one L1 stage holds the A tile (Nz), the B tile, then
// (MX) the scales of A and of B, then (second_b) the second B tile; one L0 stage an L0A and an L0B tile;
// L0C one fp32 output tile. Padding to whole fractals included.
struct Carving {
  int64_t l1_a = 0, l1_b = 0, l1_sa = 0, l1_sb = 0;  // one L1 stage
  int64_t l0a = 0, l0b = 0;                          // one L0 stage
  int64_t l0c = 0;
  int l1_stages = kL1Stages, l0_stages = kL0Stages;
  int64_t l1_b2 = 0;  // one L1 stage's second B tile

  DGA_HOST_DEVICE constexpr int64_t l1_stage() const { return l1_a + l1_b + l1_sa + l1_sb + l1_b2; }
  DGA_HOST_DEVICE constexpr int64_t l1_total() const { return l1_stages * l1_stage(); }
  DGA_HOST_DEVICE constexpr int64_t l0a_total() const { return l0_stages * l0a; }
  DGA_HOST_DEVICE constexpr int64_t l0b_total() const { return l0_stages * l0b; }
};

// Tiling: GemmTiling or a StaticTiling (taken by value, so that a StaticTiling's carving is a constant).
template <class Tiling>
DGA_HOST_DEVICE constexpr Carving carving(Tiling t, OperandBits bits) {
  constexpr int64_t acc_bytes = 4;  // fp32
  const int64_t m = layout::align_up(t.block_m, layout::kFractalRows);
  const int64_t n = layout::align_up(t.block_n, layout::kFractalRows);
  Carving c{layout::NzGeometry::fit(t.block_m, t.block_k, bits.a).bytes(),
          layout::NzGeometry::fit(t.block_n, t.block_k, bits.b).bytes(),
          bits.mx ? mx_scale_bytes(t.block_m, t.block_k) : 0,
          bits.mx ? mx_scale_bytes(t.block_n, t.block_k) : 0,
          l0_tile_bytes(t.block_m, t.l0_k, bits.l0a),
          l0_tile_bytes(t.block_n, t.l0_k, bits.l0b),
          m * n * acc_bytes,
          t.l1_stages,
          t.l0_stages};
  if (bits.second_b) c.l1_b2 = c.l1_b;
  return c;
}

// Whether `c` fits the buffers of `Arch`.
template <class Arch>
DGA_HOST_DEVICE constexpr bool carving_fits(const Carving& c) {
  return c.l1_total() <= Arch::kL1Bytes && c.l0a_total() <= Arch::kL0ABytes && c.l0b_total() <= Arch::kL0BBytes &&
         c.l0c <= Arch::kL0CBytes;
}

// Whether tiles of `Tiling` (stages included) fit the buffers of `Arch`, for operands of ABits / BBits in
// L1 and L0Bits in L0, with MX scales in L1 if Mx.
template <class Arch, class Tiling, int ABits = 16, int BBits = 16, int L0Bits = 16, bool Mx = false>
constexpr bool tiling_fits() {
  return carving_fits<Arch>(carving(Tiling{}, OperandBits{ABits, BBits, L0Bits, L0Bits, Mx}));
}

}  // namespace deepgemm_ascend::kernel
