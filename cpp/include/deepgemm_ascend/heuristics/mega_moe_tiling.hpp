// Tile and wave choices of Mega MoE (the fused dispatch, two expert GEMMs with SwiGLU between, combine).
#pragma once

#include <cstdint>

#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"

namespace deepgemm_ascend::heuristics {

// One rank's Mega MoE call as the host kernel's GEMMs see it: `tokens` tokens of this rank, each sent
// to `topk` of the `experts` local experts; L1 [2I, H] and L2 [H, I] weights; BF16, or FP8 activations
// with FP4 weights scaled per MX block.
struct MegaMoeDesc {
  int64_t tokens = 0, topk = 0, experts = 0, hidden = 0, intermediate = 0;
  bool fp8 = false;
  int num_cores = 1;
};

// The host kernel's four GEMM configs: each layer promoted at the MX block, or with folded scales.
struct MegaMoeConfigs {
  GemmConfig l1, l2, l1_fold, l2_fold;
};
MegaMoeConfigs select_mega_moe_configs(const MegaMoeDesc& d, const ArchLimits& arch);

// Mega MoE's waves on both targets: experts_per_wave experts share the ring (each may receive every token of
// every rank once, from a start aligned to `align` rows), `waves` of them cover the local experts, ring_rows
// rows hold one wave (at most ring_tokens when align divides ranks x max_tokens_per_rank).
struct MegaMoeWaves {
  int64_t experts_per_wave = 1, waves = 0, ring_rows = 0;
};
MegaMoeWaves mega_moe_waves(int64_t ring_tokens, int64_t ranks, int64_t max_tokens_per_rank, int64_t experts,
                            int64_t align);

}  // namespace deepgemm_ascend::heuristics
