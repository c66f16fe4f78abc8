// The launch ABI: the plain parameters a launch passes by value to the NPU kernels (cpp/npu), written by
// the host's dispatch; the host target reads the same structs where it runs the same kernel code (the HC
// pre-norm's vector pass).
#pragma once

#include <cstdint>

// A strided matrix in device memory: element (r, c) is value r * row_stride + c * col_stride after
// element (0, 0) at `addr` (values: packed FP4 counts nibbles).
struct DgaMatrix {
  uint64_t addr;
  int64_t rows, cols, row_stride, col_stride;
};

// Scales in device memory; addr 0: none.
//   MX (fp32 0): UE8M0, one per 32 K values, as int16 pairs of K-adjacent scales: the pair (row r, pair p)
//                is at addr + r * mn_stride + p * k_stride bytes; one of the strides is 2 (MN- or K-major).
//   fp32 1:      one float per gran_mn rows and K block (promote_k values): (r / gran_mn, kb) at
//                addr + (r / gran_mn) * mn_stride + kb * k_stride bytes.
struct DgaScales {
  uint64_t addr;
  int64_t mn_stride, k_stride;
  int64_t gran_mn;
  int32_t fp32;
};

// One GEMM D = C + A @ B^T: A logical [M, K], B logical [N, K] (any of the four majors), D and C
// [M, N] row-major. With has_c the launcher has copied C into D, and the kernel accumulates into D.
// MX kernels read the scales of A's rows (sfa) and of B's rows (sfb).
struct DgaGemmParams {
  DgaMatrix a, b, d;
  DgaScales sfa, sfb;
  int32_t d_dtype;  // deepgemm_ascend::core::DType of D: kBF16 or kFP32
  int32_t has_c;
  int64_t block_m, block_n, block_k, l0_k;  // tile config chosen by the Ascend 950 heuristics
  int32_t swizzle_band, swizzle_along_m;
  int64_t promote_k;  // fp32 scales: the K block (= l0_k); else 0
};

// M-grouped masked GEMM: `gemm` describes group 0 (A [M, K], B [N, K], D [M, N]); group g lies
// *_group values (scales: bytes) further on, and multiplies the first masked_m[g] rows (int32 in device
// memory, read by the kernel and clamped to [0, M]); masked_m 0: all M rows of every group (a batched GEMM,
// e.g. einsum's heads).
struct DgaMaskedGemmParams {
  DgaGemmParams gemm;
  int64_t a_group, b_group, d_group, groups;
  int64_t sfa_group, sfb_group;
  uint64_t masked_m;
};

// M-grouped contiguous GEMM: `gemm` describes A [M, K], group 0 of B [N, K] and D [M, N]; group g of B
// lies g * b_group values (its scales g * sfb_group bytes) further on; grouped_layout (int32, device memory) holds each row's group
// (-1: padding; [M]) or, with psum, the groups' end offsets ([G]); every group starts at a multiple of
// `align`.
struct DgaContiguousGemmParams {
  DgaGemmParams gemm;
  int64_t b_group, groups, align;
  int64_t sfb_group;
  uint64_t grouped_layout;
  int32_t psum;
};

// K-grouped GEMM: `gemm` describes A [M, sum K], B [N, sum K] (any majors), group 0 of D [M, N] and the
// scales by global K; group g of D lies g * d_group values further on and multiplies the K range
// [align_up(ends[g - 1], align), ends[g]) (int32 end offsets in device memory, read by the kernel). With
// has_c the launcher has copied C into D.
struct DgaKGroupedGemmParams {
  DgaGemmParams gemm;
  int64_t d_group, groups, align;
  uint64_t ends;
  DgaMatrix b2;  // a second B ([N, sum K] as gemm.b; addr 0: none): D[g] += A_g B_g^T + A_g B2_g^T
};

// The vector pass of the HyperConnection pre-norm GEMM (kernel/hc_prenorm.hpp): B (fp32 [N, K], K-major)
// as hi + lo bf16 terms ([N, K] each, contiguous), the row sums of squares of A (bf16 [M, K], K-major)
// over each split's K range into sqr_sum (fp32 [splits, M], contiguous), D (fp32, split s at d.addr +
// s * d_split values, rows [M, N]) zeroed when d.addr != 0, the splits' K end offsets (int32 [splits])
// when ends != 0. Splits cover K in blocks of k_block values (kernel::hc_split_range).
// sqr_sum 0: no sums of squares (the mix launch after the pass computes them).
struct DgaHcPrenormParams {
  DgaMatrix a, b, d;
  uint64_t hi, lo, sqr_sum, ends;
  int64_t d_split, splits, k_block;
};

// The HC pre-norm's products and sums of squares in one mix launch (hc_prenorm_gemm.asc): the cube cores run
// the K-grouped BF16 GEMM of `gemm` (A times hi and lo, one group per split), their vector cores the sums of
// squares of `hc` over the same tiles' rows; the vector pass before it (hc.sqr_sum 0) wrote hi, lo, the
// zeroed D and the ends.
struct DgaHcGemmParams {
  DgaKGroupedGemmParams gemm;
  DgaHcPrenormParams hc;
};

// A matrix converted on the vector cores (convert_rows.asc): dst[r, c] = src[r, c] for r < rows, c < cols
// (row-major rows with the strides of the matrices; dtypes as core::DType): fp32 <-> bf16, or packed FP4
// (kFP4E2M1x2: cols and row_stride count values, an even number) -> e4m3; with src.addr 0 the fp32 dst is
// zeroed, and with lens != 0 (int32 per row) its columns c >= lens[r] are -inf, with starts != 0 (int32 per
// row) its columns c < starts[r] too.
struct DgaConvertParams {
  DgaMatrix src, dst;
  int32_t src_dtype, dst_dtype;
  uint64_t lens, starts;
};

// FP8 MQA logits (mqa_logits.asc): `gemm` describes q as A ([S * H, D], row i * H + h), kv as B ([SKV, D])
// and the tiling (block_m H: one query per tile); the vector cores reduce each tile's scores:
//   logits[i, j] += kv_scale[j] * sum over their heads h of relu(score(i, h, j)) * weights[i, h]
// for ks[i] <= j < ke[i], -inf elsewhere (j < SKV). logits is fp32 [S, SKV] (row stride logits_stride),
// zeroed before the launch: the two vector cores of a group add their halves of the heads.
// compressed > 0 (max_seqlen_k): logits is fp32 [S, compressed] and row i holds the columns [ks[i], ke[i])
// at [0, ke[i] - ks[i]) (kernel/compressed_mqa_problems.hpp: one problem per query); the rest keeps what the
// caller put there.
struct DgaMqaParams {
  DgaGemmParams gemm;
  uint64_t weights, ks, ke, kv_scale, logits;  // fp32 [S, H] (w_stride), int32 [S] x 2, fp32 [SKV], fp32
  int64_t w_stride, logits_stride, heads;
  int64_t compressed;
};

// Paged FP8 MQA logits (mqa_logits.asc, kernel/paged_mqa_problems.hpp): `mqa.gemm` describes request 0's
// query rows as A ([next_n * H, D]) and the cache's block 0 as B ([block_kv, D]: its KV rows; the block's
// block_kv fp32 scales follow them), the tiling, and weights / logits (fp32 [B * next_n, width], zeroed
// or -inf beyond each row's length before the launch) as DgaMqaParams; ks, ke and kv_scale are not read.
// Row b * next_n + t attends to columns [0, context_lens[b * next_n + t]), page p of request b is cache
// block block_table[b * table_stride + p] (both int32, read by the kernel).
struct DgaPagedMqaParams {
  DgaMqaParams mqa;
  uint64_t context_lens, block_table;
  int64_t batch, next_n, pages, width, num_blocks;
  int64_t table_stride, block_bytes;  // int32 values between table rows, bytes between cache blocks
};

// The SwiGLU stage of Mega MoE on the vector cores (swiglu.asc), as block::swiglu_row does it per row:
// h bf16 [rows, 2I] (row stride h_stride values; gate / up interleaved by 8, or [gate | up] halves),
// weights fp32 [rows] (w_stride), out [rows, I] (out_stride values) e4m3 with UE8M0 scales (one byte per 32
// values: group g of row r at sf + r * sf_row_bytes + (g / 4) * sf_word_bytes + g % 4), or bf16 (sf 0).
// I is a multiple of 128. With ends != 0 (int32 [groups], device memory: psum end offsets, each group from an
// aligned start, as the M-grouped contiguous GEMM reads them) the rows in the gaps are skipped.
struct DgaSwigluParams {
  uint64_t h, weights, out, sf;
  int64_t rows, inter, h_stride, w_stride, out_stride, sf_row_bytes, sf_word_bytes;
  float clamp;  // +inf: none
  int32_t fp8_out, interleaved;
  uint64_t ends;
  int64_t groups, align;
};

// Mega MoE on the NPU (mega_moe.asc): the communication kernels around the GEMMs and the SwiGLU stage. Every
// rank's symmetric buffer (comm/mega_moe_layout.hpp) is at peers[r]; a buffer's sync block (at sync_off) holds
// the rank's token count (int64) and, from byte 8, one uint64 arrival epoch per rank, written by that rank
// (a barrier's epoch is one past the rank's own slot in its own block).
// This rank's work in device memory: ends (int32 [experts_per_rank]: each wave's psum end offsets, relative to
// the wave's ring), src (int32 [waves, ring_rows, 3]: (rank, token, slot) of each ring row that holds a
// token), weights (fp32 [ring_rows]), ring (bf16 [ring_rows, hidden]: the wave's gathered tokens), o (bf16
// [ring_rows, hidden]: the second GEMM's output), y (bf16 [tokens, y_stride]), recv_stats (int32
// [experts_per_rank] or 0) and status (int32 [kDgaMegaMoeStatusWords]: 0, or what went wrong
// (DgaMegaMoeStatus) and its details: ring overflow (expert, its rows), peer late (rank), bad expert id (rank,
// token, slot, id)).
inline constexpr int kDgaMegaMoeMaxRanks = 64;
inline constexpr int kDgaMegaMoeStatusWords = 8;
enum DgaMegaMoeStatus : int32_t {
  kDgaMegaMoeOk = 0,
  kDgaMegaMoeRingOverflow = 1,
  kDgaMegaMoePeerLate = 2,
  kDgaMegaMoeBadExpert = 3
};
struct DgaMegaMoeParams {
  uint64_t peers[kDgaMegaMoeMaxRanks];
  int64_t rank, ranks, experts_per_rank, topk, hidden, tokens, n;  // n: num_max_tokens_per_rank
  int64_t x_off, topk_idx_off, topk_weights_off, combine_off, sync_off;
  uint64_t ends, src, weights, ring, o, y, recv_stats, status;
  int64_t ring_rows, experts_per_wave, waves, align, y_stride, wave;
  uint64_t max_polls;  // polls of the arrivals before a barrier gives up
  // FP8 x FP4: x rows are e4m3 (hidden bytes) and the gather also copies each token's x_sf row (hidden / 32
  // UE8M0 bytes, from x_sf_off) to ring_sf; 0: x rows are bf16.
  int64_t fp8, x_sf_off;
  uint64_t ring_sf;
};
