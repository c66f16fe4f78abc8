// The symmetric buffer of Mega MoE: one byte buffer per rank, same size and layout on every rank, so a
// peer's region is found at the same offset in the peer's mapping.
//
//   workspace | x | x_sf | topk_idx | topk_weights | L1 ring tokens | L1 ring SF | L1 ring weights |
//   L2 ring tokens | L2 ring SF | combine slots
//
// x [n, H] (FP8 or BF16), x_sf int32 [n, H / 128] K-major (4 UE8M0 scales of 32 values per int32),
// topk_idx int64 [n, topk], topk_weights float32 [n, topk]; the rings hold the tokens this rank
// receives (L1: dispatched inputs, L2: activations), their scales MN-major ([rows, K / 128] int32 with
// strides (1, sf_ring_rows)); combine slots bfloat16 [topk, n, H]: slot (k, t) receives the expert
// output of this rank's token t, slot k, written by the rank that owns the expert.
#pragma once

#include <cstdint>
#include <utility>

namespace deepgemm_ascend::comm {

struct MegaMoeShape {
  int64_t num_experts = 0;              // over all ranks
  int64_t num_max_tokens_per_rank = 0;  // n, already aligned
  int64_t num_topk = 0;
  int64_t hidden = 0;                   // H
  int64_t intermediate_hidden = 0;      // I
  int64_t num_ring_tokens = 0;          // R
  int64_t num_ranks = 1;
  bool fp8 = true;                      // 'fp8xfp4' (true) or 'bf16xbf16'

  int64_t experts_per_rank() const { return num_experts / num_ranks; }
  int64_t token_bytes() const { return fp8 ? 1 : 2; }
};

struct Region {
  int64_t offset = 0, bytes = 0;
};

struct MegaMoeRegions {
  Region workspace, x, x_sf, topk_idx, topk_weights, l1_tokens, l1_sf, l1_weights, l2_tokens, l2_sf, combine;
  int64_t sf_ring_rows = 0;  // stride of the MN-major ring scales, in int32
  int64_t total_bytes = 0;
};

// Alignment of num_max_tokens_per_rank and of expert blocks: LCM of the candidate block-M set.
int64_t token_alignment();
// (min, max) ring tokens: one expert per wave vs all local experts in one wave.
std::pair<int64_t, int64_t> ring_limit(int64_t num_max_tokens_per_rank, int64_t experts_per_rank, int64_t num_topk,
                                       int64_t num_ranks);
// Default ring size for a buffer of n (aligned) tokens per rank.
int64_t default_ring_tokens(int64_t n, int64_t experts_per_rank, int64_t num_topk, int64_t num_ranks);
// Validates the shape (throwing errors naming the argument) and lays the buffer out.
MegaMoeRegions mega_moe_regions(const MegaMoeShape& s);
// Hash of everything that fixes the layout; ranks compare it before exchanging data.
uint64_t layout_hash(const MegaMoeShape& s);

}  // namespace deepgemm_ascend::comm
