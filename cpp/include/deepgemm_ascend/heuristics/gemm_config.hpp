// What a GEMM launch needs to know: the problem (GemmDesc) and the chosen configuration (GemmConfig).
#pragma once

#include <cstdint>
#include <string>

#include "deepgemm_ascend/kernel/tiling.hpp"

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
  // Grouped GEMMs: `groups` problems of m x n x k each (m: a group's expected rows; each group has its own B):
  // the tiles of all groups share the cores.
  int64_t groups = 1;
  bool second_b = false;  // a second B tile in each L1 stage (kernel::OperandBits::second_b)
};

// The kernel's vocabulary (kernel/tiling.hpp), under the names the heuristics' callers use.
using kernel::GemmConfig;
using kernel::GemmTiling;
using kernel::kL0Stages;
using kernel::kL1Stages;
using kernel::StaticTiling;
using kernel::Swizzle;
using kernel::tiling_fits;

struct BufferUsage {
  uint64_t l1 = 0, l0a = 0, l0b = 0, l0c = 0;
};

BufferUsage buffer_usage(const GemmTiling& t, const GemmDesc& d);
std::string to_string(const GemmDesc& d);
std::string to_string(const GemmConfig& c);

}  // namespace deepgemm_ascend::heuristics
