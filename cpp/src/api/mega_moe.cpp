// Mega MoE entry points: argument checks, the peer group of the symmetric buffer, and the launch.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/heuristics/mega_moe_tiling.hpp"
#include "deepgemm_ascend/host/mega_moe.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "npu_mega_moe.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

namespace {

using api::require_dtype;
using api::require_rank;
using api::require_shape;
using core::DType;

constexpr int64_t kMxGranK = arch::MxFormat::kMxBlockK;
constexpr int64_t kSfPerInt = 4;

// A weight tensor [E, rows, K] (K packed in pairs for FP4) with a unit last stride. The NPU kernels also
// take FP4 weights already widened to e4m3 [E, rows, K] (transform_weights_for_mega_moe's NPU form).
void check_weight(const TensorView& w, const char* arg, int64_t experts, int64_t rows, int64_t k, bool fp8, bool npu) {
  require_rank(w, arg, 3);
  if (fp8 && w.dtype == DType::kFP8E4M3) {
    DGA_REQUIRE(npu, kValue, arg, "e4m3 weights (transform_weights_for_mega_moe's form for the NPU kernels) run on ",
                "the NPU kernels only; the host takes the packed FP4 codes (int8 [E, rows, K / 2])");
    require_shape(w, arg, {experts, rows, k});
  } else if (fp8) {
    require_dtype(w, arg, {DType::kInt8, DType::kUInt8, DType::kFP4E2M1x2, DType::kFP8E4M3});
    require_shape(w, arg, {experts, rows, k / 2});
  } else {
    require_dtype(w, arg, {DType::kBF16});
    require_shape(w, arg, {experts, rows, k});
  }
  DGA_REQUIRE(w.stride(-1) == 1, kValue, arg, "weights must be K-major (unit last stride), got strides ",
              w.strides_str());
  if (!npu) api::require_host(w, arg);
}

// UE8M0 per 32 along K: int32 [E, rows, K / 128] (upstream) or int16 [E, rows, K / 64] (Ascend).
void check_scales(const TensorView& sf, const char* arg, int64_t experts, int64_t rows, int64_t k, bool npu) {
  require_rank(sf, arg, 3);
  require_dtype(sf, arg, {DType::kInt32, DType::kInt16});
  require_shape(sf, arg, {experts, rows, k / (kMxGranK * int64_t(core::itemsize(sf.dtype)))});
  if (!npu) api::require_host(sf, arg);
}

tile::host::MegaMoeExpert expert(const comm::MegaMoeShape& s, int64_t e, const TensorView& l1_w,
                                 const TensorView* l1_sf, const TensorView& l2_w, const TensorView* l2_sf) {
  const int bits = s.fp8 ? 4 : 16;
  tile::host::MegaMoeExpert ex;
  ex.w1 = api::matrix(api::index_leading(l1_w, e), bits, false);
  ex.w2 = api::matrix(api::index_leading(l2_w, e), bits, false);
  if (s.fp8) {
    const ScaleRecipe r{1, kMxGranK};
    ex.sf1 = api::scales(api::index_leading(*l1_sf, e), "l1_weights", 2 * s.intermediate_hidden, s.hidden, r);
    ex.sf2 = api::scales(api::index_leading(*l2_sf, e), "l2_weights", s.hidden, s.intermediate_hidden, r);
    ex.sf1_folds = layout::all_scales_fold(ex.sf1, 2 * s.intermediate_hidden, s.hidden);
    ex.sf2_folds = layout::all_scales_fold(ex.sf2, s.hidden, s.intermediate_hidden);
  }
  return ex;
}

bool debug_zero() {
  const char* v = std::getenv("DG_COMM_KERNEL_DEBUG");
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

namespace api {

namespace {
uint64_t device_addr(const core::TensorView& t) { return uint64_t(reinterpret_cast<uintptr_t>(t.ptr())); }

}  // namespace

// The SwiGLU stage on the NPU's vector cores (swiglu.asc): one launch, the rows spread over the cores.
void npu_swiglu(const core::TensorView& h, const core::TensorView& weights, const core::TensorView& out,
                const core::TensorView* out_sf, const block::SwigluParams& p, const core::TensorView* ends,
                int64_t align) {
  const api::NpuDevice dev(out, "out");
  const int64_t m = h.size(0), inter = h.size(1) / 2;
  constexpr int64_t kInt32 = 4;
  const DgaSwigluParams q{device_addr(h),
                          device_addr(weights),
                          device_addr(out),
                          out_sf ? device_addr(*out_sf) : 0,
                          m,
                          inter,
                          h.stride(0),
                          weights.stride(0),
                          out.stride(0),
                          out_sf ? out_sf->stride(0) * kInt32 : 0,
                          out_sf ? out_sf->stride(1) * kInt32 : 0,
                          p.clamp,
                          p.fp8_out ? 1 : 0,
                          p.interleaved ? 1 : 0,
                          ends ? device_addr(*ends) : 0,
                          ends ? ends->size(0) : 0,
                          align};
  dev.launch("dga_npu_launch_swiglu", unsigned(dev.vector_cores()), &q, m * inter);
}

}  // namespace api

namespace {

// Every argument of a Mega MoE call (the buffer's own layout was checked when it was made).
void check_mega_moe(const MegaMoeBuffer& buf, const comm::MegaMoeRegions& regions, const TensorView& y,
                    const TensorView& l1_w, const TensorView* l1_sf, const TensorView& l2_w, const TensorView* l2_sf,
                    const TensorView* recv_stats, float clamp, bool npu) {
  const comm::MegaMoeShape& s = buf.shape;
  const int64_t e = s.experts_per_rank(), h = s.hidden, i = s.intermediate_hidden;
  api::require_same_device(
      {{"y", &y}, {"l1_weights", &l1_w}, {"l2_weights", &l2_w}, {"cumulative_local_expert_recv_stats", recv_stats}});
  require_dtype(y, "y", {DType::kBF16});
  require_rank(y, "y", 2);
  DGA_REQUIRE(y.size(0) <= s.num_max_tokens_per_rank && y.size(1) == h, kValue, "y", "expected [T, ", h,
              "] with T <= num_max_tokens_per_rank = ", s.num_max_tokens_per_rank, ", got ", y.shape_str());
  api::require_row_major_output(y, "y");
  if (!npu) api::require_host(y, "y");
  TensorView whole;
  whole.data = reinterpret_cast<void*>(buf.buffer_ptrs[size_t(buf.rank)]);
  whole.dtype = DType::kInt8;
  whole.ndim = 1;
  whole.shape[0] = regions.total_bytes;
  whole.strides[0] = 1;
  api::require_no_overlap(y, "y", whole, "sym_buffer");
  check_weight(l1_w, "l1_weights", e, 2 * i, h, s.fp8, npu);
  check_weight(l2_w, "l2_weights", e, h, i, s.fp8, npu);
  DGA_REQUIRE(s.fp8 == (l1_sf != nullptr) && s.fp8 == (l2_sf != nullptr), kValue, "l1_weights",
              s.fp8 ? "FP8 x FP4 needs (weights, scales) pairs" : "BF16 weights take no scales");
  if (s.fp8) {
    check_scales(*l1_sf, "l1_weights", e, 2 * i, h, npu);
    check_scales(*l2_sf, "l2_weights", e, h, i, npu);
  }
  if (recv_stats) {
    require_dtype(*recv_stats, "cumulative_local_expert_recv_stats", {DType::kInt32});
    require_rank(*recv_stats, "cumulative_local_expert_recv_stats", 1);
    require_shape(*recv_stats, "cumulative_local_expert_recv_stats", {e});
    DGA_REQUIRE(recv_stats->is_contiguous(), kValue, "cumulative_local_expert_recv_stats", "must be contiguous");
    if (!npu) api::require_host(*recv_stats, "cumulative_local_expert_recv_stats");
  }
  DGA_REQUIRE(!std::isnan(clamp), kValue, "activation_clamp", "must be >= 0 or None, got nan");
}

}  // namespace

namespace {

// The host kernel's arguments: every expert's weights and scales, the GEMM configs.
struct HostMegaMoePlan {
  std::vector<tile::host::MegaMoeExpert> experts;
  tile::host::MegaMoeArgs args;
};

void plan_host(const MegaMoeBuffer& buf, const comm::MegaMoeRegions& regions, comm::PeerGroup& peers,
               const TensorView& y, const TensorView& l1_w, const TensorView* l1_sf, const TensorView& l2_w,
               const TensorView* l2_sf, const TensorView* recv_stats, const block::SwigluParams& act,
               HostMegaMoePlan& p) {
  const comm::MegaMoeShape& s = buf.shape;
  const int64_t e = s.experts_per_rank();
  for (int64_t x = 0; x < e; ++x) p.experts.push_back(expert(s, x, l1_w, l1_sf, l2_w, l2_sf));
  tile::host::MegaMoeArgs& args = p.args;
  args.shape = s;
  args.regions = regions;
  args.peers = &peers;
  args.experts = p.experts.data();
  args.y = api::mut_matrix(y);
  args.recv_stats = recv_stats ? recv_stats->as<int32_t>() : nullptr;
  args.act = act;
  // The NPU's waves, their expert starts aligned to the contiguous layout's alignment when it divides the
  // rows an expert may receive (else to the cube's block of rows), so that a wave fits the buffer's ring.
  const int64_t rows = s.num_ranks * s.num_max_tokens_per_rank, mk = get_mk_alignment_for_contiguous_layout();
  args.align = rows % mk == 0 ? mk : int64_t(tile::kCubeBlock);
  const heuristics::MegaMoeWaves waves =
      heuristics::mega_moe_waves(s.num_ring_tokens, s.num_ranks, s.num_max_tokens_per_rank, e, args.align);
  args.experts_per_wave = waves.experts_per_wave, args.waves = waves.waves, args.ring_rows = waves.ring_rows;
  const heuristics::MegaMoeConfigs configs =
      heuristics::select_mega_moe_configs({.tokens = y.size(0),
                                           .topk = s.num_topk,
                                           .experts = e,
                                           .hidden = s.hidden,
                                           .intermediate = s.intermediate_hidden,
                                           .fp8 = s.fp8,
                                           .num_cores = runtime::planning_cores()},
                                          runtime::host_arch_limits());
  args.l1_config = configs.l1;
  args.l2_config = configs.l2;
  args.l1_fold_config = configs.l1_fold;
  args.l2_fold_config = configs.l2_fold;
}

// The host kernel on every AI core, in lockstep with the peers (a core's failure stops the grid).
void launch_host(comm::PeerGroup& peers, const TensorView& y, const tile::host::MegaMoeArgs& args) {
  auto& backend = runtime::host_backend();
  const int cores = backend.num_ai_cores();
  peers.begin_call(y.size(0));
  tile::host::MegaMoeWork work;
  tile::host::GridSync grid(cores);
  try {
    backend.launch("mega_moe", cores, [&](tile::host::Core& core) {
      try {
        tile::host::mega_moe(core, grid, args, work);
      } catch (...) {
        grid.fail(std::current_exception());
        throw;
      }
    });
  } catch (...) {
    grid.rethrow_if_failed();
    throw;
  }
}

}  // namespace

void mega_moe(const MegaMoeBuffer& buf, const TensorView& y, const TensorView& l1_w, const TensorView* l1_sf,
              const TensorView& l2_w, const TensorView* l2_sf, const TensorView* recv_stats, float clamp,
              bool fast_math) {
  const comm::MegaMoeShape& s = buf.shape;
  const comm::MegaMoeRegions regions = comm::mega_moe_regions(s);
  DGA_REQUIRE(int64_t(buf.buffer_ptrs.size()) == s.num_ranks, kValue, "sym_buffer", "expected ", s.num_ranks,
              " buffer pointers (one per rank), got ", buf.buffer_ptrs.size());
  const block::SwigluParams act{.clamp = clamp < 0 ? INFINITY : clamp,
                                .fast_math = fast_math,
                                .fp8_out = s.fp8,
                                .interleaved = true};
  if (api::on_npu_target(y)) {  // the device's barriers: no host peer group
    check_mega_moe(buf, regions, y, l1_w, l1_sf, l2_w, l2_sf, recv_stats, clamp, true);
    return api::npu_mega_moe(buf, regions, y, l1_w, l1_sf, l2_w, l2_sf, recv_stats, act);
  }
  std::vector<uint8_t*> bases;
  for (uintptr_t p : buf.buffer_ptrs) bases.push_back(reinterpret_cast<uint8_t*>(p));
  comm::PeerGroup peers(bases, buf.rank, comm::layout_hash(s));
  try {
    check_mega_moe(buf, regions, y, l1_w, l1_sf, l2_w, l2_sf, recv_stats, clamp, false);
    HostMegaMoePlan plan;
    plan_host(buf, regions, peers, y, l1_w, l1_sf, l2_w, l2_sf, recv_stats, act, plan);
    launch_host(peers, y, plan.args);
    if (debug_zero())
      std::memset(bases[size_t(buf.rank)] + regions.x.offset, 0, size_t(regions.total_bytes - regions.x.offset));
  } catch (const std::exception& err) {
    peers.abort(err.what());
    throw;
  }
}

namespace {

// The SwiGLU stage's arguments: h bf16 [M, 2I] -> out [M, I] (e4m3 with out_sf int32 [M, I / 128], or bf16).
void validate_swiglu(const TensorView& h, const TensorView& weights, const TensorView& out, const TensorView* out_sf,
                     float clamp, bool npu) {
  const int64_t m = h.size(0), inter = h.size(1) / 2;
  DGA_REQUIRE(h.size(1) % (2 * kMxGranK * kSfPerInt) == 0, kValue, "h", "expected [M, 2I] with I a multiple of ",
              kMxGranK * kSfPerInt, ", got ", h.shape_str());
  DGA_REQUIRE(h.stride(1) == 1, kValue, "h", "needs a unit last stride, got strides ", h.strides_str());
  require_dtype(weights, "topk_weights", {DType::kFP32});
  require_rank(weights, "topk_weights", 1);
  require_shape(weights, "topk_weights", {m});
  require_dtype(out, "out", {DType::kFP8E4M3, DType::kBF16});
  require_rank(out, "out", 2);
  require_shape(out, "out", {m, inter});
  api::require_row_major_output(out, "out");
  const bool fp8 = out.dtype == DType::kFP8E4M3;
  DGA_REQUIRE(fp8 == (out_sf != nullptr), kValue, "out_sf",
              fp8 ? "FP8 output needs out_sf" : "BF16 output takes no scales");
  if (!npu)
    for (const auto& [arg, t] :
         {std::pair<const char*, const TensorView*>{"h", &h}, {"topk_weights", &weights}, {"out", &out}})
      api::require_host(*t, arg);
  api::require_no_overlap(out, "out", h, "h");
  if (fp8) {
    require_dtype(*out_sf, "out_sf", {DType::kInt32});
    require_rank(*out_sf, "out_sf", 2);
    require_shape(*out_sf, "out_sf", {m, inter / (kMxGranK * kSfPerInt)});
    if (!npu) api::require_host(*out_sf, "out_sf");
    api::require_no_overlap(*out_sf, "out_sf", h, "h");
    api::require_no_overlap(*out_sf, "out_sf", out, "out");
  }
  DGA_REQUIRE(!std::isnan(clamp), kValue, "activation_clamp", "must be >= 0 or None, got nan");
}

// Host: the rows spread over the AI cores, one row at a time.
void host_swiglu(const TensorView& h, const TensorView& weights, const TensorView& out, const TensorView* out_sf,
                 const block::SwigluParams& p) {
  constexpr int64_t kInt32 = 4;
  const int64_t m = h.size(0), inter = h.size(1) / 2;
  auto& backend = runtime::host_backend();
  const int blocks = int(std::min<int64_t>(m, backend.num_ai_cores()));
  backend.launch("mega_moe_swiglu", blocks, [&](tile::host::Core& core) {
    const auto [begin, end] = block::contiguous_share(m, core.block_idx(), core.block_num());
    for (int64_t r = begin; r < end; ++r) {
      auto* sf_row = p.fp8_out ? static_cast<uint8_t*>(out_sf->ptr()) + r * out_sf->stride(0) * kInt32 : nullptr;
      const int64_t k_stride = p.fp8_out ? out_sf->stride(1) * kInt32 : 0;
      block::swiglu_row(static_cast<const uint16_t*>(h.ptr()) + r * h.stride(0), inter,
                        weights.as<const float>()[r * weights.stride(0)], p,
                        static_cast<uint8_t*>(out.ptr()) + r * out.stride(0) * core::itemsize(out.dtype),
                        {sf_row, k_stride});
    }
  });
}

}  // namespace

void mega_moe_swiglu(const TensorView& h, const TensorView& weights, const TensorView& out, const TensorView* out_sf,
                     float clamp, bool fast_math, bool interleaved) {
  api::require_same_device({{"h", &h}, {"topk_weights", &weights}, {"out", &out}, {"out_sf", out_sf}});
  require_dtype(h, "h", {DType::kBF16});
  require_rank(h, "h", 2);
  const bool npu = api::on_npu_target(h);
  validate_swiglu(h, weights, out, out_sf, clamp, npu);
  const block::SwigluParams p{.clamp = clamp < 0 ? INFINITY : clamp,
                              .fast_math = fast_math,
                              .fp8_out = out.dtype == DType::kFP8E4M3,
                              .interleaved = interleaved};
  if (h.size(0) == 0) return;
  if (npu) return api::npu_swiglu(h, weights, out, out_sf, p);
  host_swiglu(h, weights, out, out_sf, p);
}

}  // namespace deepgemm_ascend
