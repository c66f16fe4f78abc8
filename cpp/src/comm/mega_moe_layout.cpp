#include "deepgemm_ascend/comm/mega_moe_layout.hpp"

#include <algorithm>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::comm {

namespace {

// The contract's sizing constants (upstream get_symm_buffer_for_mega_moe): block-M candidates
// {8, 16, 32, 64, 96, 128, 192} have LCM 384; prefill-sized buffers get a fixed large ring, smaller
// ones the ring a reference decode deployment needs.
constexpr int64_t kTokenAlignment = 384;
constexpr int64_t kPrefillTokens = 6144;
constexpr int64_t kPrefillRingTokens = 786432;
struct DecodeReference {
  int64_t tokens = 4224, experts_per_rank = 6, topk = 6, ranks = 72;
};
constexpr int64_t kRegionAlign = 512;   // every region starts on a GM burst boundary
constexpr int64_t kWorkspaceBytes = 4096;
constexpr int64_t kSfPerInt = 4;        // UE8M0 bytes per int32
constexpr int64_t kSfGran = arch::MxFormat::kMxBlockK;  // values per scale
constexpr int64_t kSfGroup = kSfPerInt * kSfGran;
constexpr int64_t kMaxTopk = 32;

int64_t align(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

}  // namespace

int64_t token_alignment() { return kTokenAlignment; }

std::pair<int64_t, int64_t> ring_limit(int64_t n, int64_t e, int64_t topk, int64_t ranks) {
  DGA_REQUIRE(n >= 0, kValue, "num_max_tokens_per_rank", "must be >= 0, got ", n);
  DGA_REQUIRE(e >= 1, kValue, "num_experts_per_rank", "must be >= 1, got ", e);
  DGA_REQUIRE(topk >= 1, kValue, "num_topk", "must be >= 1, got ", topk);
  DGA_REQUIRE(ranks >= 1, kValue, "num_ranks", "must be >= 1, got ", ranks);
  const int64_t all = n * ranks;
  return {all, std::min(all * e, align(all * topk + e * (kTokenAlignment - 1), kTokenAlignment))};
}

int64_t default_ring_tokens(int64_t n, int64_t e, int64_t topk, int64_t ranks) {
  const auto [lo, hi] = ring_limit(n, e, topk, ranks);
  int64_t want = kPrefillRingTokens;
  if (n < kPrefillTokens) {
    const DecodeReference r;
    want = ring_limit(r.tokens, r.experts_per_rank, r.topk, r.ranks).second;
  }
  return std::clamp(want, lo, std::max(lo, hi));
}

MegaMoeRegions mega_moe_regions(const MegaMoeShape& s) {
  DGA_REQUIRE(s.num_ranks >= 1, kValue, "group", "world size must be >= 1, got ", s.num_ranks);
  DGA_REQUIRE(s.num_experts >= 1 && s.num_experts % s.num_ranks == 0, kValue, "num_experts",
              "must be a positive multiple of the world size ", s.num_ranks, ", got ", s.num_experts);
  DGA_REQUIRE(s.num_max_tokens_per_rank >= 0 && s.num_max_tokens_per_rank % kTokenAlignment == 0, kValue,
              "num_max_tokens_per_rank", "must be a non-negative multiple of ", kTokenAlignment, ", got ",
              s.num_max_tokens_per_rank);
  DGA_REQUIRE(s.num_topk >= 1 && s.num_topk <= kMaxTopk, kValue, "num_topk", "must be in [1, ", kMaxTopk,
              "], got ", s.num_topk);
  DGA_REQUIRE(s.hidden > 0 && s.hidden % kSfGroup == 0, kValue, "hidden", "must be a positive multiple of ",
              kSfGroup, ", got ", s.hidden);
  DGA_REQUIRE(s.intermediate_hidden > 0 && s.intermediate_hidden % kSfGroup == 0, kValue, "intermediate_hidden",
              "must be a positive multiple of ", kSfGroup, ", got ", s.intermediate_hidden);
  const auto [lo, hi] = ring_limit(s.num_max_tokens_per_rank, s.experts_per_rank(), s.num_topk, s.num_ranks);
  DGA_REQUIRE(s.num_ring_tokens >= lo, kValue, "num_ring_tokens", "must be at least num_max_tokens_per_rank * ",
              "world size = ", lo, " (one expert may receive every token), got ", s.num_ring_tokens);
  (void)hi;

  MegaMoeRegions r;
  int64_t at = 0;
  auto take = [&](Region& reg, int64_t bytes) {
    reg = {at, bytes};
    at = align(at + bytes, kRegionAlign);
  };
  const int64_t n = s.num_max_tokens_per_rank, h = s.hidden, i = s.intermediate_hidden, ring = s.num_ring_tokens;
  const int64_t tb = s.token_bytes(), sf = s.fp8 ? 1 : 0;
  r.sf_ring_rows = align(ring, kSfPerInt);
  take(r.workspace, kWorkspaceBytes);
  take(r.x, n * h * tb);
  take(r.x_sf, sf * n * (h / kSfGroup) * kSfPerInt);
  take(r.topk_idx, n * s.num_topk * int64_t(sizeof(int64_t)));
  take(r.topk_weights, n * s.num_topk * int64_t(sizeof(float)));
  take(r.l1_tokens, ring * h * tb);
  take(r.l1_sf, sf * r.sf_ring_rows * (h / kSfGroup) * kSfPerInt);
  take(r.l1_weights, ring * int64_t(sizeof(float)));
  take(r.l2_tokens, ring * i * tb);
  take(r.l2_sf, sf * r.sf_ring_rows * (i / kSfGroup) * kSfPerInt);
  take(r.combine, s.num_topk * n * h * int64_t(sizeof(uint16_t)));
  r.total_bytes = at;
  return r;
}

uint64_t layout_hash(const MegaMoeShape& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields
  for (int64_t v : {s.num_experts, s.num_max_tokens_per_rank, s.num_topk, s.hidden, s.intermediate_hidden,
                    s.num_ring_tokens, s.num_ranks, int64_t(s.fp8)}) {
    for (int b = 0; b < 8; ++b) {
      h ^= uint64_t(v >> (8 * b)) & 0xFF;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace deepgemm_ascend::comm
