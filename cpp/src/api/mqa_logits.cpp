// Lightning-indexer MQA logits entry point.
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/kernel/mqa_logits.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

constexpr int64_t kHeadChoices[] = {8, 16, 32, 64};
constexpr int64_t kFp8HeadDims[] = {32, 64, 128};
constexpr int64_t kFp4HeadDims[] = {64, 128};

template <size_t N>
bool one_of(int64_t v, const int64_t (&set)[N]) {
  for (int64_t x : set)
    if (x == v) return true;
  return false;
}

void require_contiguous(const TensorView& t, const char* arg) {
  DGA_REQUIRE(t.is_contiguous(), kValue, arg, "must be contiguous, got strides ", t.strides_str());
}

// On the NPU target (FP8 or FP4): the logits are summed in fp32 on the device (the vector cores of a group
// add their halves of the heads), through an fp32 workspace for bf16 logits or bf16 weights. The ranges are
// read by the kernel (no host sync) and not validated on the host. Normal mode: columns outside a row's range
// get -inf with or without cleaning (upstream leaves them unspecified without). Compressed mode: row i's
// range at columns [0, ke - ks) (clamped to max_seqlen_k), the columns after it 0 (upstream: unspecified).
void npu_mqa(const TensorView& q, const TensorView* sfq, const TensorView& kv, const TensorView& sfkv,
             const TensorView& weights, const TensorView& ks, const TensorView& ke, const TensorView& logits,
             bool compressed) {
  const int64_t s = q.shape[0], heads = q.shape[1], width = logits.shape[1];
  const bool f32_out = logits.dtype == DType::kFP32, f32_w = weights.dtype == DType::kFP32;
  const int64_t acc_n = f32_out ? 0 : s * width, w_n = f32_w ? 0 : s * heads;
  const TensorView ws = acc_n + w_n > 0 ? api::npu_fp32_workspace(logits, 1, acc_n + w_n) : logits;
  const TensorView acc = f32_out ? logits : api::fp32_rows(ws, 0, s, width);
  const TensorView w32 = f32_w ? weights : api::fp32_rows(ws, acc_n, s, heads);
  if (!f32_w) api::npu_convert_rows(weights, w32);
  api::npu_zero_rows(acc);
  api::npu_mqa_logits({.q = &q, .kv = &kv, .kv_scale = &sfkv, .weights = &w32, .ks = &ks, .ke = &ke, .acc = &acc,
                       .logits = &logits, .sfq = sfq, .compressed = compressed ? width : 0});
  if (!f32_out) api::npu_convert_rows(acc, logits);
}

}  // namespace

void fp8_fp4_mqa_logits(const TensorView& q, const TensorView* sfq, const TensorView& kv, const TensorView& sfkv,
                        const TensorView& weights, const TensorView& ks, const TensorView& ke,
                        const TensorView& logits, bool clean, bool compressed) {
  api::require_same_device({{"q", &q}, {"sfq", sfq}, {"kv", &kv}, {"sfkv", &sfkv}, {"weights", &weights},
                            {"cu_seq_len_k_start", &ks}, {"cu_seq_len_k_end", &ke}, {"logits", &logits}});
  const bool npu = api::on_npu_target(q);
  if (!npu) api::require_host(q, "q");
  const bool fp4 = sfq != nullptr;
  api::require_rank(q, "q", 3);
  api::require_rank(kv, "kv", 2);
  require_contiguous(q, "q");
  require_contiguous(kv, "kv");
  if (fp4) {
    api::require_dtype(q, "q", {DType::kInt8, DType::kUInt8, DType::kFP4E2M1x2});
    api::require_dtype(kv, "kv", {DType::kInt8, DType::kUInt8, DType::kFP4E2M1x2});
  } else {
    api::require_dtype(q, "q", {DType::kFP8E4M3});
    api::require_dtype(kv, "kv", {DType::kFP8E4M3});
  }
  const int64_t s = q.shape[0], heads = q.shape[1], per = fp4 ? 2 : 1, dim = q.shape[2] * per, skv = kv.shape[0];
  DGA_REQUIRE(one_of(heads, kHeadChoices), kValue, "q", "heads must be 8, 16, 32 or 64, got ", heads);
  DGA_REQUIRE(fp4 ? one_of(dim, kFp4HeadDims) : one_of(dim, kFp8HeadDims), kValue, "q", "head_dim ", dim,
              " is not supported in ", fp4 ? "FP4 mode (64, 128)" : "FP8 mode (32, 64, 128)");
  DGA_REQUIRE(kv.shape[1] * per == dim, kValue, "kv", "expected head_dim ", dim, ", got shape ", kv.shape_str());
  if (fp4) {
    api::require_dtype(*sfq, "sfq", {DType::kInt32});
    api::require_shape(*sfq, "sfq", {s, heads});
    require_contiguous(*sfq, "sfq");
    api::require_dtype(sfkv, "sfkv", {DType::kInt32});
  } else {
    api::require_dtype(sfkv, "sfkv", {DType::kFP32});
  }
  api::require_shape(sfkv, "sfkv", {skv});
  require_contiguous(sfkv, "sfkv");
  api::require_dtype(weights, "weights", {DType::kFP32, DType::kBF16});
  api::require_shape(weights, "weights", {s, heads});
  DGA_REQUIRE(weights.stride(-1) == 1, kValue, "weights", "needs a unit last stride");
  api::require_dtype(logits, "logits", {DType::kFP32, DType::kBF16});
  DGA_REQUIRE(weights.dtype == DType::kFP32 || logits.dtype == DType::kBF16, kType, "weights",
              "bfloat16 weights need bfloat16 logits");
  api::require_rank(logits, "logits", 2);
  DGA_REQUIRE(logits.shape[0] == s && (compressed || logits.shape[1] == skv), kValue, "logits", "expected [", s,
              ", ", compressed ? "max_seqlen_k" : std::to_string(skv), "], got ", logits.shape_str());
  api::require_row_major_output(logits, "logits");
  DGA_REQUIRE(!(clean && compressed), kValue, "clean_logits", "must be False in compressed mode");
  for (const auto& [t, arg] : {std::pair{&ks, "cu_seq_len_k_start"}, std::pair{&ke, "cu_seq_len_k_end"}}) {
    api::require_dtype(*t, arg, {DType::kInt32});
    DGA_REQUIRE(t->ndim == 1 && t->shape[0] == s && t->is_contiguous(), kValue, arg, "expected a contiguous [", s,
                "] tensor, got ", t->shape_str());
  }
  const auto* lo = ks.as<const int32_t>();
  const auto* hi = ke.as<const int32_t>();
  for (int64_t i = 0; i < s && !npu; ++i) {
    DGA_REQUIRE(lo[i] >= 0 && lo[i] <= hi[i], kValue, "cu_seq_len_k_end", "row ", i, " has the range [", lo[i], ", ",
                hi[i], ") with end < start or a negative start");
    DGA_REQUIRE(hi[i] <= skv, kValue, "cu_seq_len_k_end", "row ", i, " ends at ", hi[i], ", beyond SKV = ", skv);
    if (compressed)
      DGA_REQUIRE(hi[i] - lo[i] <= logits.shape[1], kValue, "max_seqlen_k", "row ", i, " spans ", hi[i] - lo[i],
                  " KV rows, more than max_seqlen_k = ", logits.shape[1]);
  }
  for (const auto& [t, arg] : {std::pair{&q, "q"}, std::pair{&kv, "kv"}, std::pair{&weights, "weights"}})
    api::require_no_overlap(logits, "logits", *t, arg);
  if (s == 0 || skv == 0) return;
  if (npu) return npu_mqa(q, sfq, kv, sfkv, weights, ks, ke, logits, compressed);

  // bf16 weights are widened once (S x H values).
  std::vector<float> w32;
  const float* w = weights.as<const float>();
  int64_t w_stride = weights.stride(0);
  if (weights.dtype == DType::kBF16) {
    w32.resize(size_t(s * heads));
    for (int64_t i = 0; i < s; ++i)
      for (int64_t h = 0; h < heads; ++h)
        w32[size_t(i * heads + h)] = core::bf16_to_float(weights.as<const uint16_t>()[i * w_stride + h]);
    w = w32.data();
    w_stride = heads;
  }
  const tile::OperandFormat fmt = fp4 ? tile::OperandFormat::kE2M1 : tile::OperandFormat::kE4M3;
  const int bits = tile::operand_bits(fmt);
  kernel::MqaProblem problem{{.base = q.data, .origin = q.offset * per, .rows = s * heads, .cols = dim,
                              .row_stride = dim, .col_stride = 1, .bits = bits},
                             {.base = kv.data, .origin = kv.offset * per, .rows = skv, .cols = dim, .row_stride = dim,
                              .col_stride = 1, .bits = bits},
                             {},
                             {w, w_stride, lo, hi, fp4 ? nullptr : sfkv.as<const float>(), logits.ptr(),
                              logits.stride(0), logits.dtype, heads, skv, clean, compressed}};
  if (fp4) problem.scaling = {true, api::ue8m0_rows(sfq->ptr()), api::ue8m0_rows(sfkv.ptr())};
  api::launch_mqa(&problem, 1, fmt, s * heads, skv, dim, heads, logits.dtype);
}

}  // namespace deepgemm_ascend
