#include "deepgemm_ascend/heuristics/mqa_tiling.hpp"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"

namespace deepgemm_ascend::heuristics {

// The NPU MQA kernels keep two fp32 output tiles in L0C (the next tile's Mmad beside this one's Fixpipe).
static_assert(2 * kNpuMqaMaxRows * kNpuMqaBlockN * int64_t(sizeof(float)) <= arch::Ascend950::kL0CBytes,
              "two of the largest MQA tiles must fit the 950's L0C");

namespace {

constexpr int kL0Bits = 16;  // the host kernel widens both operands to 16 bits in L0

// K = head_dim in one block and one L0 step; tiles walked one column band at a time along M.
GemmConfig one_k_block(int64_t block_m, int64_t block_n, int64_t dim, int l1_stages) {
  return {.tiling = {.block_m = block_m, .block_n = block_n, .block_k = dim, .l0_k = dim,
                     .l1_stages = l1_stages, .l0_stages = kL0Stages},
          .swizzle = {.band = 1, .along_m = true}};
}

// Queries a tile holds: at most `queries`, as many as kNpuMqaMaxRows rows take, one at least.
int64_t queries_per_tile(int64_t heads, int64_t queries) {
  return layout::imax(1, layout::imin(queries, kNpuMqaMaxRows / heads));
}

}  // namespace

GemmDesc mqa_gemm_desc(const MqaDesc& d) {
  return {.m = d.rows,
          .n = d.kv_rows,
          .k = d.dim,
          .a_bits = d.operand_bits,
          .b_bits = d.operand_bits,
          .l0_bits = kL0Bits,
          .d_bytes = d.logits_bytes,
          .with_accumulation = false,
          .num_cores = d.num_cores,
          .promote_k = d.mx_scales ? int64_t(arch::MxFormat::kMxBlockK) : 0,
          .m_multiple = d.heads};
}

GemmConfig select_mqa_config(const MqaDesc& d, const ArchLimits& arch) {
  return select_gemm_config(mqa_gemm_desc(d), arch);
}

GemmConfig npu_mqa_config(int64_t heads, int64_t dim, int64_t queries) {
  return one_k_block(layout::align_up(queries_per_tile(heads, queries) * heads, layout::kFractalRows),
                     kNpuMqaBlockN, dim, kernel::kMqaL1Stages);
}

GemmConfig npu_paged_mqa_config(int64_t heads, int64_t next_n, int64_t block_kv, int64_t dim) {
  return one_k_block(layout::align_up(queries_per_tile(heads, next_n) * heads, layout::kFractalRows), block_kv,
                     dim, kernel::kPagedMqaL1Stages);
}

}  // namespace deepgemm_ascend::heuristics
