// Pure functions GemmDesc -> GemmConfig. Candidates are enumerated, filtered by the Arch tag's
// buffer capacities, scored by a waves x roofline model (copy time added to compute time where the
// target cannot overlap them), and the cheapest wins.
#pragma once

#include <utility>

#include <cstdint>

#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/heuristics/perf_model.hpp"

namespace deepgemm_ascend::heuristics {

struct ArchLimits {
  const char* name;
  uint64_t l1, l0a, l0b, l0c;
  uint32_t l1_align;
  int64_t mmad_max_dim;
  int64_t max_block_mn, max_block_k;  // the largest block_m / block_n and block_k considered
  double ridge_flops_per_byte;
  int swizzle_band;
  bool copies_overlap_compute;
  double widen_flops_per_value = 0.0;  // narrow operands widened on the way to L0 (host only)
  bool accumulator_traffic_per_l0_step = false;  // fp32 accumulators reloaded per L0 K step (host)
  PerfModel perf{};  // NPU archs: the score is the predicted time

  template <class Arch>
  static constexpr ArchLimits of() {
    return {.name = Arch::kName, .l1 = Arch::kL1Bytes, .l0a = Arch::kL0ABytes, .l0b = Arch::kL0BBytes,
            .l0c = Arch::kL0CBytes, .l1_align = Arch::kL1Align, .mmad_max_dim = Arch::kMmadMaxDim,
            .max_block_mn = Arch::kMaxBlockMN, .max_block_k = Arch::kMaxBlockK,
            .ridge_flops_per_byte = Arch::kRidgeFlopsPerByte, .swizzle_band = Arch::kSwizzleBand,
            .copies_overlap_compute = Arch::kCopiesOverlapCompute, .widen_flops_per_value = Arch::kWidenFlopsPerValue,
            .accumulator_traffic_per_l0_step = Arch::kAccumulatorTrafficPerL0Step, .perf = PerfModel::of<Arch>()};
  }
};

bool fits(const GemmTiling& t, const GemmDesc& d, const ArchLimits& arch);

// A GEMM as the NPU cube sees it: operands keep their width in L0 and the MX cube applies the scales
// itself, so L0 K is free (no per-block promotion as on the host); bf16 / fp32 D of d_bytes.
// mx: MX operands whose UE8M0 scales the cube applies (staged through L1 with them).
GemmDesc npu_gemm_desc(int64_t m, int64_t n, int64_t k, int a_bits, int b_bits, int d_bytes, int cores,
                       bool mx = false);
GemmConfig select_gemm_config(const GemmDesc& d, const ArchLimits& arch);

// Upstream's set_block_size_multiple_of: every GEMM tile config chosen afterwards (host and NPU) has
// block_m a multiple of `m` and block_n a multiple of `n` (powers of two up to 256; 1 = no constraint).
void set_block_size_multiple_of(int64_t m, int64_t n);
std::pair<int64_t, int64_t> block_size_multiple_of();

template <class Arch>
GemmConfig select_gemm_config(const GemmDesc& d) {
  return select_gemm_config(d, ArchLimits::of<Arch>());
}

}  // namespace deepgemm_ascend::heuristics
