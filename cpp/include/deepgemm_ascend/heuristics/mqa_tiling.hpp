// Tile choices of the lightning-indexer MQA logits kernels (dense and paged), host and NPU targets.
// A tile holds whole queries (all their heads) against a block of KV rows; K is the head dimension.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"

namespace deepgemm_ascend::heuristics {

// One host MQA logits launch: `rows` query rows (queries x heads) against `kv_rows` KV rows of `dim`
// values; FP4 operands carry UE8M0 scales per 32 values (promoted per MX block).
struct MqaDesc {
  int64_t rows = 0, kv_rows = 0, dim = 0, heads = 0;
  int operand_bits = 8;
  int logits_bytes = 4;
  bool mx_scales = false;
  int num_cores = 1;
};

// The GEMM the host kernel runs (block_m whole queries: a multiple of the head count).
GemmDesc mqa_gemm_desc(const MqaDesc& d);
// The host config for `d` (select_gemm_config over mqa_gemm_desc).
GemmConfig select_mqa_config(const MqaDesc& d, const ArchLimits& arch);

// NPU: KV columns per tile of the dense kernel.
inline constexpr int64_t kNpuMqaBlockN = 256;
// NPU: (query, head) rows per tile at most this many (whole queries; one query at least).
inline constexpr int64_t kNpuMqaMaxRows = 128;

// NPU dense kernel: the heads of up to `queries` queries per tile (as many as kNpuMqaMaxRows holds; the
// rows padded to the cube's 16-row fractal), so that each KV tile is loaded once for them; kNpuMqaBlockN
// KV rows, K = head_dim in one block so that every tile's scores reach the vector cores once.
GemmConfig npu_mqa_config(int64_t heads, int64_t dim, int64_t queries);
// NPU paged kernel: the heads of as many of a request's next_n queries as kNpuMqaMaxRows holds per tile,
// so that a page's KV rows are loaded once for them; one cache page (block_kv rows) per tile column block.
GemmConfig npu_paged_mqa_config(int64_t heads, int64_t next_n, int64_t block_kv, int64_t dim);

}  // namespace deepgemm_ascend::heuristics
