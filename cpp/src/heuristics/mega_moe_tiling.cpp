#include "deepgemm_ascend/heuristics/mega_moe_tiling.hpp"

#include <algorithm>

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"

namespace deepgemm_ascend::heuristics {

namespace {

using core::kBf16Bits;
using core::kFp8Bits;
using core::kFp4Bits;
using core::kBf16Bytes;
constexpr int64_t kWholeRows = 16;  // block_m: a multiple of the cube's fractal rows

// One expert GEMM [m, k] x [n, k]^T with a bf16 D; fold: every scale folds (no promotion).
GemmConfig expert_config(const MegaMoeDesc& d, int64_t m, int64_t n, int64_t k, bool fold, const ArchLimits& arch) {
  const GemmDesc desc{.m = m,
                      .n = n,
                      .k = k,
                      .a_bits = d.fp8 ? kFp8Bits : kBf16Bits,
                      .b_bits = d.fp8 ? kFp4Bits : kBf16Bits,
                      .l0_bits = kBf16Bits,
                      .d_bytes = kBf16Bytes,
                      .with_accumulation = false,
                      .num_cores = d.num_cores,
                      .promote_k = d.fp8 && !fold ? int64_t(arch::MxFormat::kMxBlockK) : 0,
                      .m_multiple = kWholeRows};
  return select_gemm_config(desc, arch);
}

}  // namespace

MegaMoeConfigs select_mega_moe_configs(const MegaMoeDesc& d, const ArchLimits& arch) {
  // The rows an expert expects: this rank's routed tokens spread evenly over its experts.
  const int64_t m = std::max<int64_t>(1, d.tokens * d.topk / std::max<int64_t>(1, d.experts));
  const int64_t h = d.hidden, i = d.intermediate;
  return {.l1 = expert_config(d, m, 2 * i, h, false, arch),
          .l2 = expert_config(d, m, h, i, false, arch),
          .l1_fold = expert_config(d, m, 2 * i, h, true, arch),
          .l2_fold = expert_config(d, m, h, i, true, arch)};
}

MegaMoeWaves mega_moe_waves(int64_t ring_tokens, int64_t ranks, int64_t max_tokens_per_rank, int64_t experts,
                            int64_t align) {
  const int64_t per_wave =
      std::clamp<int64_t>(ring_tokens / std::max<int64_t>(1, ranks * max_tokens_per_rank), 1, experts);
  return {.experts_per_wave = per_wave,
          .waves = (experts + per_wave - 1) / per_wave,
          .ring_rows = per_wave * layout::align_up(ranks * max_tokens_per_rank, align)};
}

}  // namespace deepgemm_ascend::heuristics
