// The public C++ API of deepgemm_ascend. Every entry point validates its arguments first and throws
// core::Error (naming the argument) before anything is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "deepgemm_ascend/comm/mega_moe_layout.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/core/tensor_view.hpp"

namespace deepgemm_ascend {

using core::TensorView;

// ---- dense BF16 GEMM: D = C + A @ B -------------------------------------------------------------
// layout "nt": A [M, K], B [N, K];  "nn": A [M, K], B [K, N];  "tn": A [K, M], B [K, N];
// "tt": A [K, M], B [N, K]. A and B are bfloat16 with any strides; D is bfloat16 or float32 with
// unit last stride; C (optional) matches D's dtype and shape and may be D itself.
void bf16_gemm(const std::string& layout, const TensorView& a, const TensorView& b, const TensorView& d,
               const TensorView* c = nullptr);
inline void bf16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("nt", a, b, d, c);
}
inline void bf16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("nn", a, b, d, c);
}
inline void bf16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("tn", a, b, d, c);
}
inline void bf16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr) {
  bf16_gemm("tt", a, b, d, c);
}

// ---- FP8 / FP4 dense GEMM with block scaling: D = C + (A * SFA) @ (B * SFB) --------------------
// A and B are float8_e4m3fn / float8_e5m2, or packed FP4 e2m1 (int8, uint8 or float4_e2m1fn_x2: the
// last stored dimension holds two values per byte and must be contiguous), stored as `layout` says
// (as for bf16_gemm). Scales are given in logical orientation, [rows, K blocks]:
//   float32 [ceil(MN / gran_mn), ceil(K / gran_k)], any strides; or UE8M0 packed along K, rows MN
//   (gran_mn 1): int16 pairs [MN, ceil(SK / 2)] (the Ascend layout) or int32 quads [MN, ceil(SK / 4)]
//   (upstream), SK = ceil(K / gran_k).
// gran_k is 32 or 128 per side. The product of every K block of min(gran_k) values is promoted into
// the fp32 accumulator with its row and column scales; D is rounded once.
struct ScaleRecipe {
  int64_t gran_mn = 1;
  int64_t gran_k = 128;
};
void fp8_fp4_gemm(const std::string& layout, const TensorView& a, const TensorView& sfa, const TensorView& b,
                  const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe recipe_a,
                  ScaleRecipe recipe_b);
// FP8 D = A @ B^T written with a gap in every head (upstream's EpilogueHeadSplits): B's N rows are heads of
// left + right rows; column c of head h of the product goes to D column h * (left + mid + right) + c for
// c < left, + mid after that; D [M, N + N / (left + right) * mid] bf16 or fp32, its mid columns untouched.
// A, B float8_e4m3fn; scales as fp8_fp4_gemm with gran_k 128 (B's gran_n must divide left and right).
void fp8_gemm_nt_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, int64_t left, int64_t mid, int64_t right, ScaleRecipe recipe_a,
                               ScaleRecipe recipe_b);

// ---- MoE grouped GEMMs ------------------------------------------------------------------------
// BF16 when sfa / sfb are null, FP8 / FP4 with scales (as fp8_fp4_gemm) otherwise. D is written in
// place; rows that belong to no group are left untouched unless stated.
//
// M-grouped contiguous: A [M, K]; B [G, N, K] ("nt") or [G, K, N] ("nn"); D [M, N] bf16, no C.
// grouped_layout int32: [M] group id per row (-1 = padding row), or with use_psum_layout [G] end
// offsets (group g covers rows [align(end[g-1], alignment), end[g])). Segments start at multiples of
// get_mk_alignment_for_contiguous_layout(). Per-row ids: a group's padding rows up to its next aligned row
// are computed with the group (as upstream computes whole aligned blocks); rows of an aligned chunk that
// starts with -1 are untouched. With use_psum_layout and ensure_zero_padding the gap rows of D are zeroed. SFA [M, SK] (gran_mn 1); SFB [G, ceil(N / gran_n), SK] (or packed per group).
// a_rows (BF16, per-row ids, host only: upstream's legacy fused form): int32 [M], row r of the product is
// A's row a_rows[r] (any number of A rows), a negative entry a row of zeros.
void m_grouped_gemm_contiguous(const std::string& layout, const TensorView& a, const TensorView* sfa,
                               const TensorView& b, const TensorView* sfb, const TensorView& d,
                               const TensorView& grouped_layout, bool use_psum_layout, bool ensure_zero_padding,
                               ScaleRecipe recipe_a = {}, ScaleRecipe recipe_b = {},
                               const TensorView* a_rows = nullptr);
// M-grouped masked: A [G, Mmax, K], B [G, N, K], D [G, Mmax, N] bf16; rows m < masked_m[g] of group g
// are computed, the others left untouched. SFA [G, Mmax, SK], SFB [G, ceil(N / gran_n), SK].
void m_grouped_gemm_masked(const TensorView& a, const TensorView* sfa, const TensorView& b, const TensorView* sfb,
                           const TensorView& d, const TensorView& masked_m, int64_t expected_m,
                           ScaleRecipe recipe_a = {}, ScaleRecipe recipe_b = {});
// K-grouped ("tn"): A [sum K, M], B [sum K, N], D and C [G, M, N] float32: D[g] = C[g] + A_g^T B_g,
// group g owning rows [sum_{h<g} ks[h], + ks[g]); every ks[g] is a multiple of the mk alignment.
// With psum_ends (the psum layout) group g owns rows [align(end[g-1], alignment), end[g]) instead and
// ks is ignored; host tensors may give those end offsets as `device_ends` (int32 [G], host memory) with ks
// empty instead. FP8 scales (recipe (1, 1, gran_k)): SFA [sum_g ceil(k_g / gran_k), M], SFB with N.
// NPU tensors: `device_ends` (int32 [G] on the device) holds the groups' end offsets, which the kernel
// reads (psum_ends is not used; ks, if given, is checked); FP8 takes e4m3 with UE8M0 scale pairs by
// global K, int16 [ceil(sum K / 64), MN] (pair p covers K [64p, 64p + 64)), recipe (1, 1, 32).
void k_grouped_gemm(const TensorView& a, const TensorView* sfa, const TensorView& b, const TensorView* sfb,
                    const TensorView& d, const std::vector<int64_t>& ks, const TensorView& c,
                    ScaleRecipe recipe_a = {}, ScaleRecipe recipe_b = {},
                    const std::vector<int64_t>* psum_ends = nullptr, const TensorView* device_ends = nullptr);

// Upstream's legacy K-grouped BF16 GEMM ("tn", deep_gemm.legacy): A [KA, M] and B [KB, N] bf16, D [G, M, N]
// float32 or bf16; group g sums the K positions k in [k_start[g], k_end[g]) (an empty range: D[g] = 0, or
// unchanged with acc). With gather_a, position k reads A's row k_indices[k] and B's row k; else A's row k
// and B's row k_indices[k] (a negative index: zeros). k_indices int32 [K] (K = the rows of the operand not
// gathered), k_start / k_end int32 [G]; acc adds onto D. Host tensors only.
void legacy_k_grouped_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& k_indices,
                           const TensorView& k_start, const TensorView& k_end, bool acc, bool gather_a);

// K-grouped FP8 ("nt", upstream's SM90 layout): A and B are contiguous buffers holding, group after
// group, A_g [M, ks[g]] and B_g [N, ks[g]] row-major; ks[g] multiples of 128; SFA [M, sum(ks) / 128] and
// SFB [N, sum(ks) / 128] float32 (any strides); D and C [G, M, N] float32.
void k_grouped_fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                           const TensorView& d, const std::vector<int64_t>& ks, const TensorView& c);

// Group alignment of contiguous layouts (rows for M-grouped, K for K-grouped); default 128.
int64_t get_mk_alignment_for_contiguous_layout();
void set_mk_alignment_for_contiguous_layout(int64_t alignment);

// ---- HyperConnection pre-norm GEMM ----------------------------------------------------------------
// a [M, K] bfloat16, b [N, K] float32 read as TF32, both K-major; K % 64 == 0, N % 8 == 0, N <= 128.
// num_splits == 0: d [M, N] = a @ tf32(b)^T and sqr_sum [M] = sum_k a^2. num_splits S > 0: the K/64
// blocks are split as evenly as possible (the first K/64 % S splits get one more) and split s writes
// d [S, M, N][s] and sqr_sum [S, M][s] over its K range.
void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          int64_t num_splits);

// ---- einsum (BF16) ------------------------------------------------------------------------------
//   "bhr,hdr->bhd": d[b,h,d] = sum_r a[b,h,r] b[h,d,r]      (a, b, d bfloat16, no c)
//   "bhd,hdr->bhr": d[b,h,r] = sum_d a[b,h,d] b[h,d,r]      (a, b, d bfloat16, no c)
//   "bmk,bnk->mn":  d[m,n] = c[m,n] + sum_b sum_k a[b,m,k] b[b,n,k]  (float32 d with c == d, or
//                   bfloat16 d without c, accumulated in an fp32 workspace)
// Operands need a unit last stride; other strides are free.
void einsum(const std::string& expr, const TensorView& a, const TensorView& b, const TensorView& d,
            const TensorView* c = nullptr);

// ---- Lightning-indexer MQA logits ---------------------------------------------------------------
// FP8 mode (sfq null): q [S, H, D] float8_e4m3fn, kv [SKV, D] float8_e4m3fn, sfkv [SKV] float32.
// FP4 mode: q [S, H, D/2] packed e2m1 with sfq [S, H] int32 (4 UE8M0 bytes, one per 32 of D), kv
// [SKV, D/2] packed with sfkv [SKV] int32. weights [S, H] float32 (or bfloat16 with bfloat16 logits),
// ks / ke int32 [S] (absolute KV rows, 0 <= ks <= ke <= SKV). logits [S, SKV] (or [S, max_seqlen_k]
// when compressed) float32 or bfloat16 with a unit last stride:
//   logits[i, j] = sum_h relu(q(i, h) . kv(j)) * weights[i, h]  for ks[i] <= j < ke[i]  (at j - ks[i]
//   when compressed); -inf elsewhere with clean (normal mode only), untouched otherwise (on the NPU target,
//   FP8 normal mode only: -inf elsewhere also without clean; ks / ke are read by the kernel, not validated).
void fp8_fp4_mqa_logits(const TensorView& q, const TensorView* sfq, const TensorView& kv, const TensorView& sfkv,
                        const TensorView& weights, const TensorView& ks, const TensorView& ke,
                        const TensorView& logits, bool clean, bool compressed);

// Paged KV cache: q [B, nn, H, D] (FP8) or [B, nn, H, D/2] packed with sfq [B, nn, H] int32; kv_cache
// uint8 [num_blocks, block_kv, 1, D + 4] (FP8) or [.., D/2 + 4] (FP4), block_kv 32 or 64, each block
// holding all block_kv value rows first, then block_kv 4-byte scales (float32 / packed UE8M0);
// weights [B * nn, H]; context_lens int32 [B, nn]; block_table int32 [B (or B * nn tokens with
// indices), max_blocks]; logits [B * nn, max_context_len]. Row r = b * nn + t holds
// logit(r, p) = sum_h relu(q(b, t, h) . kv(p)) * weights[r, h] for p < context_lens[b, t]; -inf beyond
// with clean, untouched otherwise. indices (int32 [B], next_n 1): request id per token (varlen mode).
void fp8_fp4_paged_mqa_logits(const TensorView& q, const TensorView* sfq, const TensorView& kv_cache,
                              const TensorView& weights, const TensorView& context_lens, const TensorView& block_table,
                              const TensorView& logits, bool clean, const TensorView* indices);

// FP8 einsum (float8_e4m3fn operands, float32 scales, batch = h):
//   "bhr,hdr->bhd": sfa [b, h, ceil(r / gran_k)], sfb [h, ceil(d / gran_n), ceil(r / gran_k)]
//   "bhd,hdr->bhr": sfa [b, h, ceil(d / gran_k)], sfb [h, ceil(d / gran_k), ceil(r / gran_n)]
//   "bhd,bhr->hdr": contraction over b; sfa [ceil(b / gran_k), h, d], sfb [ceil(b / gran_k), h, r];
//                   d float32 accumulated (c = d)
// d bfloat16 or float32, optional c as for the dense GEMMs.
void fp8_einsum(const std::string& expr, const TensorView& a, const TensorView& sfa, const TensorView& b,
                const TensorView& sfb, const TensorView& d, const TensorView* c, ScaleRecipe recipe_a,
                ScaleRecipe recipe_b);

// ---- Mega MoE (expert-parallel dispatch, two expert GEMMs, SwiGLU and combine in one launch) ----
// Every rank of the group holds one symmetric buffer laid out by comm::mega_moe_regions; this rank
// sees all of them at buffer_ptrs[r]. Before each (collective) call every rank fills its x, x_sf,
// topk_idx (-1 = unused slot) and topk_weights for its T = y.size(0) tokens.
// FP8 x FP4 (shape.fp8): l1_w int8 [E, 2I, H/2], l1_sf int32 [E, 2I, H/128], l2_w int8 [E, H, I/2],
// l2_sf int32 [E, H, I/128] (packed UE8M0 per 32 along K, any strides; or int16 [.., K/64], the Ascend
// packing); BF16: l1_w bfloat16 [E, 2I, H],
// l2_w [E, H, I], no scales. E = experts per rank; L1 rows gate/up interleaved by 8 (the transform of
// transform_weights_for_mega_moe); weights need a unit last stride. y bfloat16 [T, H].
// recv_stats int32 [E] (optional) += (token, slot) pairs received per local expert. clamp < 0 = none.
struct MegaMoeBuffer {
  comm::MegaMoeShape shape;
  std::vector<uintptr_t> buffer_ptrs;
  int rank = 0;
};
void mega_moe(const MegaMoeBuffer& buf, const TensorView& y, const TensorView& l1_w, const TensorView* l1_sf,
              const TensorView& l2_w, const TensorView* l2_sf, const TensorView* recv_stats, float clamp,
              bool fast_math);
// The vector stage of the unfused pipeline, exactly as mega_moe applies it: h bfloat16 [M, 2I]
// ([gate | up] halves, or interleaved by 8), weights float32 [M]; out float8_e4m3fn [M, I] with
// out_sf int32 [M, I/128] (UE8M0 per 32, any strides), or out bfloat16 [M, I] without scales.
void mega_moe_swiglu(const TensorView& h, const TensorView& weights, const TensorView& out, const TensorView* out_sf,
                     float clamp, bool fast_math, bool interleaved);

// ---- fractal layouts ---------------------------------------------------------------------------
// src [R, C] or [G, R, C] of `value_bits` (16, 8, or 4 = packed pairs along the last dimension);
// Nz dst [.., ceil(C / C0), align(R, 16), C0] and Zn dst [.., ceil(R / C0), align(C, 16), C0], in
// storage units (bytes for 4-bit, C0 = 256 / value_bits values). Padding is zero. Errors name the
// ND/fractal input `t` and the output `out`, as the Python API does.
enum class Fractal { kNz, kZn };
void to_fractal(Fractal f, const TensorView& src, const TensorView& dst, int value_bits);
void from_fractal(Fractal f, const TensorView& src, const TensorView& dst, int value_bits);

// ---- runtime -----------------------------------------------------------------------------------
int get_num_ai_cores();
int get_max_ai_cores();  // cores of the device
void set_num_ai_cores(int n);  // 0 = all cores of the device
const char* version();

}  // namespace deepgemm_ascend
