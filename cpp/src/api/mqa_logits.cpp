// Lightning-indexer MQA logits entry point: validate, dispatch to the host or the NPU, which run one
// kernel (kernel/mqa_logits.hpp) over one problem source (kernel/mqa_segments.hpp).
#include <string>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/kernel/mqa_segments.hpp"
#include "gemm_common.hpp"
#include "mqa_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;

namespace {

void require_contiguous(const TensorView& t, const char* arg) {
  DGA_REQUIRE(t.is_contiguous(), kValue, arg, "must be contiguous, got strides ", t.strides_str());
}

// The arguments of one call.
struct MqaCall {
  const TensorView &q, *sfq, &kv, &sfkv, &weights, &ks, &ke, &logits;
  bool clean, compressed;
};

// The validated sizes: S queries of H heads and D values against SKV KV rows; where the call runs.
struct MqaShape {
  int64_t s, heads, dim, skv;
  bool fp4, npu;
};

// q fp8 [S, H, D] / packed fp4 [S, H, D / 2], kv likewise [SKV, D]: returns the sizes.
MqaShape validate_operands(const MqaCall& m) {
  const bool npu = api::on_npu_target(m.q), fp4 = m.sfq != nullptr;
  if (!npu) api::require_host(m.q, "q");
  api::require_rank(m.q, "q", 3);
  api::require_rank(m.kv, "kv", 2);
  require_contiguous(m.q, "q");
  require_contiguous(m.kv, "kv");
  for (const auto& [t, arg] : {std::pair{&m.q, "q"}, std::pair{&m.kv, "kv"}}) {
    if (fp4) api::require_dtype(*t, arg, {DType::kInt8, DType::kUInt8, DType::kFP4E2M1x2});
    else api::require_dtype(*t, arg, {DType::kFP8E4M3});
  }
  const int64_t per = fp4 ? 2 : 1;
  const MqaShape sh{.s = m.q.shape[0],
                    .heads = m.q.shape[1],
                    .dim = m.q.shape[2] * per,
                    .skv = m.kv.shape[0],
                    .fp4 = fp4,
                    .npu = npu};
  api::require_mqa_heads(sh.heads, sh.dim, fp4);
  DGA_REQUIRE(m.kv.shape[1] * per == sh.dim, kValue, "kv", "expected head_dim ", sh.dim, ", got shape ",
              m.kv.shape_str());
  return sh;
}

// FP4: sfq int32 [S, H] and sfkv int32 [SKV] (UE8M0 row scales); FP8: sfkv fp32 [SKV].
void validate_scales(const MqaCall& m, const MqaShape& sh) {
  if (sh.fp4) {
    api::require_dtype(*m.sfq, "sfq", {DType::kInt32});
    api::require_shape(*m.sfq, "sfq", {sh.s, sh.heads});
    require_contiguous(*m.sfq, "sfq");
    api::require_dtype(m.sfkv, "sfkv", {DType::kInt32});
  } else {
    api::require_dtype(m.sfkv, "sfkv", {DType::kFP32});
  }
  api::require_shape(m.sfkv, "sfkv", {sh.skv});
  require_contiguous(m.sfkv, "sfkv");
}

// logits [S, SKV] (compressed: [S, max_seqlen_k]); the ranges int32 [S].
void validate_outputs(const MqaCall& m, const MqaShape& sh) {
  api::require_mqa_weights(m.weights, sh.s, sh.heads);
  api::require_mqa_logits(m.logits, m.weights);
  DGA_REQUIRE(m.logits.shape[0] == sh.s && (m.compressed || m.logits.shape[1] == sh.skv), kValue, "logits",
              "expected [", sh.s, ", ", m.compressed ? "max_seqlen_k" : std::to_string(sh.skv), "], got ",
              m.logits.shape_str());
  api::require_row_major_output(m.logits, "logits");
  DGA_REQUIRE(!(m.clean && m.compressed), kValue, "clean_logits", "must be False in compressed mode");
  for (const auto& [t, arg] : {std::pair{&m.ks, "cu_seq_len_k_start"}, std::pair{&m.ke, "cu_seq_len_k_end"}}) {
    api::require_dtype(*t, arg, {DType::kInt32});
    DGA_REQUIRE(t->ndim == 1 && t->shape[0] == sh.s && t->is_contiguous(), kValue, arg, "expected a contiguous [", sh.s,
                "] tensor, got ", t->shape_str());
  }
}

// Host: every row's [start, end) range lies in [0, SKV) (and within max_seqlen_k when compressed). On the
// NPU target the ranges are read by the kernel (no host sync) and not validated on the host.
void validate_ranges(const MqaCall& m, const MqaShape& sh) {
  if (sh.npu) return;
  const auto* lo = m.ks.as<const int32_t>();
  const auto* hi = m.ke.as<const int32_t>();
  for (int64_t i = 0; i < sh.s; ++i) {
    DGA_REQUIRE(lo[i] >= 0 && lo[i] <= hi[i], kValue, "cu_seq_len_k_end", "row ", i, " has the range [", lo[i], ", ",
                hi[i], ") with end < start or a negative start");
    DGA_REQUIRE(hi[i] <= sh.skv, kValue, "cu_seq_len_k_end", "row ", i, " ends at ", hi[i], ", beyond SKV = ", sh.skv);
    if (m.compressed)
      DGA_REQUIRE(hi[i] - lo[i] <= m.logits.shape[1], kValue, "max_seqlen_k", "row ", i, " spans ", hi[i] - lo[i],
                  " KV rows, more than max_seqlen_k = ", m.logits.shape[1]);
  }
}

MqaShape validate(const MqaCall& m) {
  api::require_same_device({{"q", &m.q},
                            {"sfq", m.sfq},
                            {"kv", &m.kv},
                            {"sfkv", &m.sfkv},
                            {"weights", &m.weights},
                            {"cu_seq_len_k_start", &m.ks},
                            {"cu_seq_len_k_end", &m.ke},
                            {"logits", &m.logits}});
  const MqaShape sh = validate_operands(m);
  validate_scales(m, sh);
  validate_outputs(m, sh);
  validate_ranges(m, sh);
  api::require_mqa_no_overlap(m.logits, m.q, m.kv, "kv", m.weights);
  return sh;
}

// NPU target (FP8 or FP4). Normal mode: columns outside a row's range get -inf with or without cleaning
// (upstream leaves them unspecified without), set before the launch, which computes each row's range only.
// Compressed mode: row i's range at columns [0, ke - ks) (clamped to max_seqlen_k), the columns after it 0
// (upstream: unspecified).
void dispatch_npu(const MqaCall& m) {
  const api::NpuLogitsWork work = api::npu_logits_work(m.logits, m.weights);
  if (m.compressed) api::npu_zero_rows(work.acc);
  else api::npu_zero_rows(work.acc, &m.ke, &m.ks);
  api::npu_mqa_logits({.q = &m.q,
                       .kv = &m.kv,
                       .kv_scale = &m.sfkv,
                       .weights = &work.weights,
                       .ks = &m.ks,
                       .ke = &m.ke,
                       .acc = &work.acc,
                       .logits = &m.logits,
                       .sfq = m.sfq,
                       .compressed = m.compressed ? m.logits.shape[1] : 0});
  api::npu_finish_logits(work, m.logits);
}

// Host: the same kernel and problems as the NPU's (kernel/mqa_logits.hpp, kernel/mqa_segments.hpp), the
// logits prepared as there.
void dispatch_host(const MqaCall& m, const MqaShape& sh) {
  const auto* ks = m.ks.as<const int32_t>();
  const auto* ke = m.ke.as<const int32_t>();
  api::HostLogitsWork work = api::host_logits_work(m.logits, m.weights);
  if (m.compressed) api::host_zero_rows(work);
  else api::host_zero_rows(work, ke, ks);
  // Compressed: one query a problem.
  const kernel::GemmArgs args = api::host_mqa_args(api::mqa_format(sh.fp4), m.compressed ? sh.heads : sh.s * sh.heads,
                                                   sh.skv, sh.dim, sh.heads);
  DgaMqaParams p = api::host_mqa_params(work, sh.heads, m.compressed ? m.logits.shape[1] : 0);
  p.ks = api::addr(ks), p.ke = api::addr(ke), p.kv_scale = sh.fp4 ? 0 : api::addr(m.sfkv.ptr());
  kernel::GemmProblem g{.a = api::mqa_rows(m.q, sh.s * sh.heads, sh.dim, sh.fp4),
                        .b = api::mqa_rows(m.kv, sh.skv, sh.dim, sh.fp4),
                        .epilogue = {},
                        .scaling = {}};
  if (sh.fp4) g.scaling = {.enabled = true, .a = api::ue8m0_rows(m.sfq->ptr()), .b = api::ue8m0_rows(m.sfkv.ptr())};
  api::launch_mqa(p, args, kernel::query_mqa_segments(p, g, args.config.tiling.block_m, kernel::HostRows{ks},
                                                      kernel::HostRows{ke}));
  api::host_finish_logits(work, m.logits);
}

}  // namespace

void fp8_fp4_mqa_logits(const TensorView& q, const TensorView* sfq, const TensorView& kv, const TensorView& sfkv,
                        const TensorView& weights, const TensorView& ks, const TensorView& ke, const TensorView& logits,
                        bool clean, bool compressed) {
  const MqaCall m{.q = q,
                  .sfq = sfq,
                  .kv = kv,
                  .sfkv = sfkv,
                  .weights = weights,
                  .ks = ks,
                  .ke = ke,
                  .logits = logits,
                  .clean = clean,
                  .compressed = compressed};
  const MqaShape sh = validate(m);
  if (sh.s == 0 || sh.skv == 0) return;
  if (sh.npu) return dispatch_npu(m);
  dispatch_host(m, sh);
}

}  // namespace deepgemm_ascend
