// What a GEMM launch needs to know: the problem (GemmDesc) and the chosen configuration (GemmConfig).
#pragma once

#include <cstdint>
#include <string>

namespace deepgemm_ascend::heuristics {

struct GemmDesc {
  int64_t m = 0, n = 0, k = 0;
  int a_bits = 16, b_bits = 16;  // operand bits in GM and L1
  int l0_bits = 16;              // operand bits in L0A / L0B
  int d_bytes = 4;
  bool with_accumulation = false;
  int num_cores = 1;
  int64_t promote_k = 0;  // scaled GEMMs: K block promoted at once (l0_k must equal it); 0 = unscaled
  int64_t m_multiple = 16;  // block_m must be a multiple of it (e.g. whole query rows of all heads)
  // MX scales staged with the operands (the 950's MX cube): L1 holds them too, and block_k and l0_k are
  // multiples of arch::MxFormat::kMxBaseK.
  bool mx_scales = false;
  // block_m * block_n at most this (0: no limit), e.g. the vector cores' UB of a promoted NPU GEMM.
  int64_t max_tile_values = 0;
};

// Stages of the GEMM's L1 and L0 rings (double buffering): compile-time, the rings' event ids are.
inline constexpr int kL1Stages = 2;
inline constexpr int kL0Stages = 2;

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

// Whether tiles of `Tiling` (stages included) fit the buffers of `Arch`, for operands of a_bits /
// b_bits in L1 and l0_bits in L0, with MX scales in L1 if Mx; padding to whole fractals included.
template <class Arch, class Tiling, int ABits = 16, int BBits = 16, int L0Bits = 16, bool Mx = false>
constexpr bool tiling_fits() {
  constexpr int64_t rows = Arch::kFractalRows, acc_bytes = 4;
  constexpr int64_t m = (Tiling::block_m + rows - 1) / rows * rows, n = (Tiling::block_n + rows - 1) / rows * rows;
  constexpr int64_t scale_bytes =
      Mx ? (m + n) * ((Tiling::block_k + Arch::kMxBaseK - 1) / Arch::kMxBaseK) * Arch::kMxScalesPerPack : 0;
  constexpr int64_t l1 = Tiling::l1_stages * ((m * ABits + n * BBits) * Tiling::block_k / 8 + scale_bytes);
  constexpr int64_t l0a = Tiling::l0_stages * m * Tiling::l0_k * L0Bits / 8;
  constexpr int64_t l0b = Tiling::l0_stages * n * Tiling::l0_k * L0Bits / 8;
  return l1 <= Arch::kL1Bytes && l0a <= Arch::kL0ABytes && l0b <= Arch::kL0BBytes && m * n * acc_bytes <= Arch::kL0CBytes;
}

// Tiles are walked in serpentine bands of `band` tile rows (along_m) or tile columns.
struct Swizzle {
  int band = 1;
  bool along_m = true;
};

struct GemmConfig {
  GemmTiling tiling;
  Swizzle swizzle;
  int num_blocks = 1;
};

struct BufferUsage {
  uint64_t l1 = 0, l0a = 0, l0b = 0, l0c = 0;
};

BufferUsage buffer_usage(const GemmTiling& t, const GemmDesc& d);
std::string to_string(const GemmDesc& d);
std::string to_string(const GemmConfig& c);

}  // namespace deepgemm_ascend::heuristics
