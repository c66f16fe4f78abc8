// Pieces shared by the dense and paged MQA logits entry points: the weight and logits checks, the host's
// fp32 weights, the NPU's fp32 accumulation and the operand refs.
#pragma once

#include <vector>

#include "deepgemm_ascend/core/tensor_view.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/tile/operand.hpp"

namespace deepgemm_ascend::api {

// q's heads (8, 16, 32 or 64) and head_dim (FP8: 32, 64 or 128; FP4: 64 or 128), upstream's sets.
void require_mqa_heads(int64_t heads, int64_t dim, bool fp4);
// weights fp32 / bf16 [rows, heads] with a unit last stride.
void require_mqa_weights(const core::TensorView& weights, int64_t rows, int64_t heads);
// logits fp32 / bf16, 2-D, bf16 when the weights are bf16.
void require_mqa_logits(const core::TensorView& logits, const core::TensorView& weights);
// logits overlaps none of q, kv (the cache) and weights.
void require_mqa_no_overlap(const core::TensorView& logits, const core::TensorView& q, const core::TensorView& kv,
                            const char* kv_arg, const core::TensorView& weights);

// FP4 (packed e2m1 with UE8M0 row scales) or FP8 e4m3 operands.
tile::OperandFormat mqa_format(bool fp4);
// The query rows (or KV rows) of `t`: `rows` rows of `dim` values, contiguous, one format for both.
layout::MatrixRef mqa_rows(const core::TensorView& t, int64_t rows, int64_t dim, bool fp4);

// Host: the weights as fp32 (bf16 weights widened once into `storage`).
struct Fp32Weights {
  std::vector<float> storage;
  const float* data = nullptr;
  int64_t stride = 0;
};
Fp32Weights fp32_weights(const core::TensorView& weights);

// NPU: the logits are summed in fp32 on the device (the vector cores of a group add their halves of the
// heads), through an fp32 workspace for bf16 logits or bf16 weights. npu_logits_work converts the weights;
// the caller zeroes `acc`, launches and calls npu_finish_logits.
struct NpuLogitsWork {
  core::TensorView acc, weights;
};
NpuLogitsWork npu_logits_work(const core::TensorView& logits, const core::TensorView& weights);
void npu_finish_logits(const NpuLogitsWork& work, const core::TensorView& logits);

}  // namespace deepgemm_ascend::api
