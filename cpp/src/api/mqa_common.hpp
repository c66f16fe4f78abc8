// Pieces shared by the dense and paged MQA logits entry points: the weight and logits checks, the fp32
// logits and weights the kernel works on (host and NPU), the host's launch and the operand refs.
#pragma once

#include <vector>

#include "deepgemm_ascend/core/tensor_view.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/mqa_segments.hpp"
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

// Host: the kernel writes fp32 logits as on the NPU: `acc` is the logits (fp32) or an fp32 copy (bf16
// logits, rounded back by host_finish_logits); the weights fp32.
struct HostLogitsWork {
  std::vector<float> storage;
  float* acc = nullptr;
  int64_t rows = 0, cols = 0, stride = 0;
  Fp32Weights weights;
};
HostLogitsWork host_logits_work(const core::TensorView& logits, const core::TensorView& weights);
// As npu_zero_rows on the host: acc = 0; with `lens` its columns c >= lens[r] are -inf, with `starts` its
// columns c < starts[r] too.
void host_zero_rows(HostLogitsWork& work, const int32_t* lens = nullptr, const int32_t* starts = nullptr);
void host_finish_logits(const HostLogitsWork& work, const core::TensorView& logits);

// Host: the MQA kernel's arguments for problems of `rows` q rows (of `heads` rows a query) against `kv_rows`
// KV rows of `dim` values; its tiles hold whole queries.
kernel::GemmArgs host_mqa_args(tile::OperandFormat fmt, int64_t rows, int64_t kv_rows, int64_t dim, int64_t heads);
// Host: the launch parameters the problem sources read (kernel/mqa_segments.hpp): weights and logits of `work`
// (ks, ke and kv_scale 0: set by the caller).
DgaMqaParams host_mqa_params(const HostLogitsWork& work, int64_t heads, int64_t compressed);
// Host: the MQA-logits kernel (kernel/mqa_logits.hpp on the host's vector target) over a problem source.
void launch_mqa(const DgaMqaParams& p, const kernel::GemmArgs& args,
                const kernel::QueryMqaSegments<kernel::HostRows>& problems);
void launch_mqa(const DgaMqaParams& p, const kernel::GemmArgs& args,
                const kernel::PagedMqaSegments<kernel::HostRows>& problems);

}  // namespace deepgemm_ascend::api
