#include "mqa_common.hpp"

#include <algorithm>
#include <cmath>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/heuristics/mqa_tiling.hpp"
#include "deepgemm_ascend/host/host_mqa_vector.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"
#include "gemm_common.hpp"
#include "validate.hpp"

namespace deepgemm_ascend::api {

using core::DType;
using core::TensorView;

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
}  // namespace

void require_mqa_heads(int64_t heads, int64_t dim, bool fp4) {
  DGA_REQUIRE(one_of(heads, kHeadChoices), kValue, "q", "heads must be 8, 16, 32 or 64, got ", heads);
  DGA_REQUIRE(fp4 ? one_of(dim, kFp4HeadDims) : one_of(dim, kFp8HeadDims), kValue, "q", "head_dim ", dim,
              " is not supported in ", fp4 ? "FP4 mode (64, 128)" : "FP8 mode (32, 64, 128)");
}

void require_mqa_weights(const TensorView& weights, int64_t rows, int64_t heads) {
  require_dtype(weights, "weights", {DType::kFP32, DType::kBF16});
  require_shape(weights, "weights", {rows, heads});
  DGA_REQUIRE(weights.stride(-1) == 1, kValue, "weights", "needs a unit last stride");
}

void require_mqa_logits(const TensorView& logits, const TensorView& weights) {
  require_dtype(logits, "logits", {DType::kFP32, DType::kBF16});
  DGA_REQUIRE(weights.dtype == DType::kFP32 || logits.dtype == DType::kBF16, kType, "weights",
              "bfloat16 weights need bfloat16 logits");
  require_rank(logits, "logits", 2);
}

void require_mqa_no_overlap(const TensorView& logits, const TensorView& q, const TensorView& kv, const char* kv_arg,
                            const TensorView& weights) {
  for (const auto& [t, arg] : {std::pair{&q, "q"}, std::pair{&kv, kv_arg}, std::pair{&weights, "weights"}})
    require_no_overlap(logits, "logits", *t, arg);
}

tile::OperandFormat mqa_format(bool fp4) { return fp4 ? tile::OperandFormat::kE2M1 : tile::OperandFormat::kE4M3; }

layout::MatrixRef mqa_rows(const TensorView& t, int64_t rows, int64_t dim, bool fp4) {
  const int64_t per = fp4 ? 2 : 1;  // values per stored byte
  return {.base = t.data,
          .origin = t.offset * per,
          .rows = rows,
          .cols = dim,
          .row_stride = dim,
          .col_stride = 1,
          .bits = tile::operand_bits(mqa_format(fp4))};
}

Fp32Weights fp32_weights(const TensorView& weights) {
  Fp32Weights w{.storage = {}, .data = weights.as<const float>(), .stride = weights.stride(0)};
  if (weights.dtype != DType::kBF16) return w;
  const int64_t rows = weights.shape[0], heads = weights.shape[1];
  w.storage.resize(size_t(rows * heads));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t h = 0; h < heads; ++h)
      w.storage[size_t(i * heads + h)] = core::bf16_to_float(weights.as<const uint16_t>()[i * w.stride + h]);
  w.data = w.storage.data();
  w.stride = heads;
  return w;
}

NpuLogitsWork npu_logits_work(const TensorView& logits, const TensorView& weights) {
  const bool f32_out = logits.dtype == DType::kFP32, f32_w = weights.dtype == DType::kFP32;
  const int64_t rows = logits.shape[0], width = logits.shape[1], heads = weights.shape[1];
  const int64_t acc_n = f32_out ? 0 : rows * width, w_n = f32_w ? 0 : rows * heads;
  const TensorView ws = acc_n + w_n > 0 ? npu_fp32_workspace(logits, 1, acc_n + w_n) : logits;
  const NpuLogitsWork work{.acc = f32_out ? logits : fp32_rows(ws, 0, rows, width),
                           .weights = f32_w ? weights : fp32_rows(ws, acc_n, rows, heads)};
  if (!f32_w) npu_convert_rows(weights, work.weights);
  return work;
}

void npu_finish_logits(const NpuLogitsWork& work, const TensorView& logits) {
  if (logits.dtype != DType::kFP32) npu_convert_rows(work.acc, logits);
}

HostLogitsWork host_logits_work(const TensorView& logits, const TensorView& weights) {
  HostLogitsWork w{.storage = {},
                   .acc = nullptr,
                   .rows = logits.shape[0],
                   .cols = logits.shape[1],
                   .stride = logits.stride(0),
                   .weights = fp32_weights(weights)};
  if (logits.dtype == DType::kFP32) {
    w.acc = logits.as<float>();
  } else {
    w.storage.resize(size_t(w.rows * w.cols));
    w.acc = w.storage.data(), w.stride = w.cols;
  }
  return w;
}

void host_zero_rows(HostLogitsWork& work, const int32_t* lens, const int32_t* starts) {
  for (int64_t r = 0; r < work.rows; ++r) {
    float* row = work.acc + r * work.stride;
    const int64_t lo = starts != nullptr ? std::clamp<int64_t>(starts[r], 0, work.cols) : 0;
    const int64_t hi = lens != nullptr ? std::clamp<int64_t>(lens[r], lo, work.cols) : work.cols;
    std::fill(row, row + lo, -INFINITY);
    std::fill(row + lo, row + hi, 0.0f);
    std::fill(row + hi, row + work.cols, -INFINITY);
  }
}

void host_finish_logits(const HostLogitsWork& work, const TensorView& logits) {
  if (logits.dtype == DType::kFP32) return;
  auto* out = logits.as<uint16_t>();
  for (int64_t r = 0; r < work.rows; ++r)
    for (int64_t c = 0; c < work.cols; ++c)
      out[r * logits.stride(0) + c] = core::float_to_bf16(work.acc[r * work.stride + c]);
}

kernel::GemmArgs host_mqa_args(tile::OperandFormat fmt, int64_t rows, int64_t kv_rows, int64_t dim, int64_t heads) {
  const bool scaled = fmt == tile::OperandFormat::kE2M1;
  const heuristics::MqaDesc desc{.rows = rows,
                                 .kv_rows = kv_rows,
                                 .dim = dim,
                                 .heads = heads,
                                 .operand_bits = tile::operand_bits(fmt),
                                 .logits_bytes = int(sizeof(float)),
                                 .mx_scales = scaled,
                                 .num_cores = runtime::planning_cores()};
  kernel::GemmArgs args{.problems = nullptr,
                        .num_problems = 0,
                        .config = heuristics::select_mqa_config(desc, runtime::host_arch_limits()),
                        .operands = {.a = fmt, .b = fmt},
                        .scaled = scaled};
  print_gemm_config("mqa_logits", heuristics::mqa_gemm_desc(desc), args.config);
  DGA_REQUIRE(args.config.tiling.block_m % heads == 0, kRuntime, "q", "the host's MQA tiles of ",
              args.config.tiling.block_m, " rows do not hold whole queries of ", heads, " heads");
  return args;
}

DgaMqaParams host_mqa_params(const HostLogitsWork& work, int64_t heads, int64_t compressed) {
  DgaMqaParams p{};
  p.weights = addr(work.weights.data), p.logits = addr(work.acc);
  p.w_stride = work.weights.stride, p.logits_stride = work.stride, p.heads = heads, p.compressed = compressed;
  return p;
}

namespace {

template <class Problems>
void launch_host_mqa(const DgaMqaParams& p, kernel::GemmArgs args, const Problems& problems) {
  const int64_t tiles = kernel::tile_count(problems, args.config.tiling);
  if (tiles == 0) return;
  args.config.num_blocks = int(std::min<int64_t>(tiles, runtime::planning_cores()));
  runtime::host_backend().launch("mqa_logits", args.config.num_blocks, [&](tile::host::Core& core) {
    kernel::mqa_logits_vector<tile::host::HostMqaVector>(core, args, args.config.tiling, problems, p);
  });
}

}  // namespace

void launch_mqa(const DgaMqaParams& p, const kernel::GemmArgs& args,
                const kernel::QueryMqaSegments<kernel::HostRows>& problems) {
  launch_host_mqa(p, args, problems);
}
void launch_mqa(const DgaMqaParams& p, const kernel::GemmArgs& args,
                const kernel::PagedMqaSegments<kernel::HostRows>& problems) {
  launch_host_mqa(p, args, problems);
}

}  // namespace deepgemm_ascend::api
