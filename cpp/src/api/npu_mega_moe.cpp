// Mega MoE on the NPU target: the launches of one rank's call on its stream (the communication kernels of
// mega_moe.asc, the M-grouped contiguous GEMM and the SwiGLU stage), all reading what the earlier launches
// wrote in device memory, so that the host never waits for the device.
//
//   dispatch barrier        every rank's inputs (and token count) are in its buffer
//   route                   the ring rows of each local expert, wave by wave (experts_per_wave experts each;
//                           the route, gather, scatter and combine are kernel/mega_moe_moves.hpp, the host's too)
//   per wave: gather, L1 GEMM (psum ends of the wave's experts), SwiGLU (bf16, or e4m3 with UE8M0 scales),
//             L2 GEMM, scatter; FP8 x FP4: each GEMM's FP4 weights of the wave's experts widened to e4m3
//             on the vector cores first (the 950's MX cube pairs fp8 with fp8 only), scales unchanged,
//             unless transform_weights_for_mega_moe widened them once (e4m3 weights)
//   combine barrier         every expert output is in its combine slot
//   combine                 y[t] = bf16(sum of its slots)
//
// A wave holds experts_per_wave = num_ring_tokens / (world size x num_max_tokens_per_rank) experts: each may
// receive every token of every rank once, from a start aligned to the contiguous layout's alignment. The
// waves are fixed in advance (the host does not read the counts), as the host kernel's are.
#include "npu_mega_moe.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/heuristics/mega_moe_tiling.hpp"
#include "deepgemm_ascend/host/mega_moe.hpp"
#include "deepgemm_ascend/kernel/gemm_problems.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"

namespace deepgemm_ascend::api {

namespace {

using core::DType;
using core::TensorView;

constexpr int64_t kSyncOffset = 1024;  // the NPU sync block in the buffer's workspace (after the host header)
constexpr int64_t kWorkAlign = 512;
constexpr double kPollsPerSecond = 1e6;  // [assumed] one poll of the arrivals (a GM -> UB copy) per microsecond
constexpr double kDefaultTimeoutS = 100;

int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// A contiguous view of device memory `p` on `like`'s device.
TensorView view(const TensorView& like, void* p, DType dtype, std::initializer_list<int64_t> shape) {
  TensorView v;
  v.data = p, v.offset = 0, v.dtype = dtype, v.device = like.device;
  v.ndim = int(shape.size());
  int d = 0;
  for (int64_t s : shape) v.shape[d++] = s;
  int64_t stride = 1;
  for (int i = v.ndim - 1; i >= 0; --i) v.strides[i] = stride, stride *= v.shape[i];
  return v;
}

double timeout_s() {
  const char* v = std::getenv("DGA_COMM_TIMEOUT_S");
  const double t = v && *v ? std::atof(v) : 0;
  return t > 0 ? t : kDefaultTimeoutS;
}

// FP8 x FP4 weights given as FP4 codes, which each wave widens to e4m3 (not the transform's e4m3 weights).
bool fp4_codes(const comm::MegaMoeShape& s, const TensorView& w) { return s.fp8 && w.dtype != DType::kFP8E4M3; }

// The work of one call in device memory, carved from the device workspace (valid until the next request:
// the launches below take none, their GEMMs having a bf16 D, no C and, for FP8 x FP4, weights already
// widened to e4m3 here). FP8: ring and act hold e4m3 rows with their UE8M0 scale rows (ring_sf, act_sf,
// K-major bytes), w1 / w2 the wave's experts' FP4 weights widened to e4m3 (none for e4m3 weights).
struct Work {
  int32_t *ends, *src, *status;
  float* weights;
  uint8_t *ring, *h, *act, *o, *ring_sf, *act_sf, *w1, *w2;
};

Work carve(const NpuDevice& dev, const comm::MegaMoeShape& s, int64_t waves, int64_t epw, int64_t rows,
           const TensorView& l1_w, const TensorView& l2_w) {
  const int64_t e = s.experts_per_rank(), hidden = s.hidden, inter = s.intermediate_hidden;
  const int64_t x_bytes = s.fp8 ? 1 : 2, mx = s.fp8 ? arch::MxFormat::kMxBlockK : 0;
  // Room for the wave's widened weights of a layer whose weights are FP4 codes.
  const auto wide = [&](const TensorView& w) { return fp4_codes(s, w) ? epw : 0; };
  constexpr int kParts = 12;
  const int64_t parts[kParts] = {e * 4,
                                 waves * rows * 3 * 4,
                                 kDgaMegaMoeStatusWords * 4,
                                 rows * 4,
                                 rows * hidden * x_bytes,
                                 rows * 2 * inter * 2,
                                 rows * inter * x_bytes,
                                 rows * hidden * 2,
                                 mx ? rows * hidden / mx : 0,
                                 mx ? rows * inter / mx : 0,
                                 wide(l1_w) * 2 * inter * hidden,
                                 wide(l2_w) * hidden * inter};
  int64_t total = 0;
  for (int64_t b : parts) total += align_up(b, kWorkAlign);
  auto* base = static_cast<uint8_t*>(dev.workspace(size_t(total)));
  uint8_t* at[kParts];
  int64_t off = 0;
  for (int i = 0; i < kParts; ++i) at[i] = base + off, off += align_up(parts[i], kWorkAlign);
  return {reinterpret_cast<int32_t*>(at[0]),
          reinterpret_cast<int32_t*>(at[1]),
          reinterpret_cast<int32_t*>(at[2]),
          reinterpret_cast<float*>(at[3]),
          at[4],
          at[5],
          at[6],
          at[7],
          at[8],
          at[9],
          at[10],
          at[11]};
}

// UE8M0 scales of 32 K values, K-major bytes, `row_bytes` per row (as int16 pairs for the MX cube).
layout::ScaleRef mx_rows(const void* base, int64_t row_bytes) {
  constexpr int kPair = int(arch::MxFormat::kMxScalesPerPack);
  return {base, true, kPair, row_bytes, kPair, 1, arch::MxFormat::kMxBlockK};
}

// On the model the launches have finished when launch returns: a barrier that gave up or a route that
// overflowed the ring is raised at once. A device's status is not read (that would wait for the stream).
void check_status(const NpuDevice& dev, const Work& w, const comm::MegaMoeShape& s, int rank) {
  if (!dev.model()) return;
  if (w.status[0] == kDgaMegaMoePeerLate)
    core::fail(core::ErrorKind::kRuntime, "sym_buffer", "rank ", rank, ": rank ", w.status[1],
               " did not arrive at a Mega MoE barrier within DGA_COMM_TIMEOUT_S (", timeout_s(), " s)");
  tile::host::raise_mega_moe_route_status(w.status, rank, s.num_experts);
}

// The NPU's own limits on a Mega MoE call (the arguments were checked by the caller).
void validate_npu(const comm::MegaMoeShape& s, const comm::MegaMoeRegions& regions, const TensorView* l1_sf,
                  const TensorView* l2_sf) {
  DGA_REQUIRE(s.num_ranks <= kDgaMegaMoeMaxRanks, kNotImplemented, "group", "Mega MoE on the NPU takes at most ",
              kDgaMegaMoeMaxRanks, " ranks, got ", s.num_ranks);
  DGA_REQUIRE(regions.workspace.bytes >= kSyncOffset + 8 + 8 * kDgaMegaMoeMaxRanks, kRuntime, "sym_buffer",
              "the buffer's workspace has no room for the NPU sync block");
  for (const auto& [sf, arg] : {std::pair{l1_sf, "l1_weights"}, std::pair{l2_sf, "l2_weights"}})
    DGA_REQUIRE(sf == nullptr || sf->stride(-1) == 1, kValue, arg,
                "the NPU kernels read scale rows K-major (unit last stride), got strides ", sf->strides_str());
}

// The communication kernels' parameters: the peers' buffers and regions, the work, the waves.
DgaMegaMoeParams params(const MegaMoeBuffer& buf, const comm::MegaMoeRegions& regions, const TensorView& y,
                        const TensorView* recv_stats, const Work& w, const heuristics::MegaMoeWaves& plan,
                        int64_t align) {
  const comm::MegaMoeShape& s = buf.shape;
  DgaMegaMoeParams p{};
  for (int r = 0; r < s.num_ranks; ++r) p.peers[r] = buf.buffer_ptrs[size_t(r)];
  p.rank = buf.rank, p.ranks = s.num_ranks, p.experts_per_rank = s.experts_per_rank(), p.topk = s.num_topk;
  p.hidden = s.hidden, p.tokens = y.size(0), p.n = s.num_max_tokens_per_rank;
  p.x_off = regions.x.offset, p.topk_idx_off = regions.topk_idx.offset;
  p.topk_weights_off = regions.topk_weights.offset, p.combine_off = regions.combine.offset;
  p.sync_off = regions.workspace.offset + kSyncOffset;
  p.ends = addr(w.ends), p.src = addr(w.src), p.weights = addr(w.weights), p.ring = addr(w.ring), p.o = addr(w.o);
  p.y = addr(y.ptr()), p.recv_stats = recv_stats ? addr(recv_stats->ptr()) : 0, p.status = addr(w.status);
  p.ring_rows = plan.ring_rows, p.experts_per_wave = plan.experts_per_wave, p.waves = plan.waves;
  p.align = align, p.y_stride = y.stride(0);
  p.max_polls = uint64_t(timeout_s() * kPollsPerSecond);
  p.fp8 = s.fp8 ? 1 : 0, p.x_sf_off = regions.x_sf.offset, p.ring_sf = addr(w.ring_sf);
  return p;
}

// One wave's expert GEMMs and their operands.
struct WaveGemms {
  const NpuDevice& dev;
  const comm::MegaMoeShape& s;
  const Work& w;
  const TensorView &y, &l1_w, *l1_sf, &l2_w, *l2_sf;
  const block::SwigluParams& act;
  int64_t rows, align;
};

// One layer's GEMM over the experts [first, first + groups); FP8 x FP4: FP4 weights widened to e4m3 into
// `wide` first (the 950's MX cube pairs fp8 with fp8 only), scales unchanged; e4m3 weights (widened by
// transform_weights_for_mega_moe) as they are.
void wave_gemm(const WaveGemms& g, int64_t first, const TensorView& ends, const TensorView& a, const void* a_sf,
               const TensorView& weight, const TensorView* wsf, void* wide, const TensorView& d) {
  const bool fp4 = fp4_codes(g.s, weight);
  const int bits = g.s.fp8 ? 8 : 16, w_bits = fp4 ? 4 : bits, per = fp4 ? 2 : 1;  // FP4: two per byte
  const tile::OperandFormat fmt = g.s.fp8 ? tile::OperandFormat::kE4M3 : tile::OperandFormat::kBF16;
  kernel::ContiguousProblems<kernel::HostRows> problems{.a = matrix(a, bits, false),
                                                        .b = matrix(index_leading(weight, first), w_bits, false),
                                                        .e = epilogue(d, nullptr),
                                                        .b_group = weight.strides[0] * per,
                                                        .groups = ends.size(0),
                                                        .align = g.align,
                                                        .ids = {}};
  if (fp4) {
    const layout::MatrixRef b = problems.b;
    problems.b = npu_widen_fp4(g.y, b, problems.groups, problems.b_group, wide);
    problems.b_group = b.rows * b.cols;
  }
  if (g.s.fp8) {
    const TensorView sf0 = index_leading(*wsf, first);
    const int64_t item = int64_t(core::itemsize(wsf->dtype));
    problems.scaling = {.enabled = true,
                        .a = mx_rows(a_sf, a.size(1) / arch::MxFormat::kMxBlockK),
                        .b = mx_rows(sf0.ptr(), wsf->strides[1] * item)};
    problems.sfb_group = wsf->strides[0] * item;
  }
  npu_contiguous_gemm(problems, {.a = fmt, .b = fmt}, true, ends, d);
}

// A wave: gather its experts' rows, L1 GEMM, SwiGLU, L2 GEMM, scatter.
void run_wave(const WaveGemms& g, DgaMegaMoeParams& p, int64_t wave, int64_t first, int64_t groups) {
  const comm::MegaMoeShape& s = g.s;
  const int64_t rows = g.rows, hidden = s.hidden, inter = s.intermediate_hidden;
  const DType x_type = s.fp8 ? DType::kFP8E4M3 : DType::kBF16;
  const TensorView ring = view(g.y, g.w.ring, x_type, {rows, hidden});
  const TensorView h = view(g.y, g.w.h, DType::kBF16, {rows, 2 * inter});
  const TensorView a2 = view(g.y, g.w.act, x_type, {rows, inter});
  const TensorView a2_sf = view(g.y, g.w.act_sf, DType::kInt32, {rows, inter / (4 * arch::MxFormat::kMxBlockK)});
  const TensorView o = view(g.y, g.w.o, DType::kBF16, {rows, hidden});
  const TensorView weights = view(g.y, g.w.weights, DType::kFP32, {rows});
  const TensorView ends = view(g.y, g.w.ends + first, DType::kInt32, {groups});
  const unsigned cores = unsigned(g.dev.vector_cores());
  p.wave = wave;
  g.dev.launch("dga_npu_launch_mega_moe_gather", cores, &p, rows * hidden);
  wave_gemm(g, first, ends, ring, g.w.ring_sf, g.l1_w, g.l1_sf, g.w.w1, h);
  npu_swiglu(h, weights, a2, s.fp8 ? &a2_sf : nullptr, g.act, &ends, g.align);
  wave_gemm(g, first, ends, a2, g.w.act_sf, g.l2_w, g.l2_sf, g.w.w2, o);
  g.dev.launch("dga_npu_launch_mega_moe_scatter", cores, &p, rows * hidden);
}

}  // namespace

void npu_mega_moe(const MegaMoeBuffer& buf, const comm::MegaMoeRegions& regions, const TensorView& y,
                  const TensorView& l1_w, const TensorView* l1_sf, const TensorView& l2_w, const TensorView* l2_sf,
                  const TensorView* recv_stats, const block::SwigluParams& act) {
  const comm::MegaMoeShape& s = buf.shape;
  validate_npu(s, regions, l1_sf, l2_sf);
  const NpuDevice dev(y, "y");
  const int64_t e = s.experts_per_rank(), ranks = s.num_ranks;
  const int64_t align = get_mk_alignment_for_contiguous_layout();
  const heuristics::MegaMoeWaves plan =
      heuristics::mega_moe_waves(s.num_ring_tokens, ranks, s.num_max_tokens_per_rank, e, align);
  const Work w = carve(dev, s, plan.waves, plan.experts_per_wave, plan.ring_rows, l1_w, l2_w);
  npu_zero_rows(view(y, w.status, DType::kFP32, {1, kDgaMegaMoeStatusWords}));
  DgaMegaMoeParams p = params(buf, regions, y, recv_stats, w, plan, align);

  dev.launch("dga_npu_launch_mega_moe_dispatch_barrier", 1, &p, ranks);
  check_status(dev, w, s, buf.rank);
  dev.launch("dga_npu_launch_mega_moe_route", 1, &p,
             ranks * s.num_max_tokens_per_rank * s.num_topk + plan.waves * plan.ring_rows);
  check_status(dev, w, s, buf.rank);
  const WaveGemms g{.dev = dev,
                    .s = s,
                    .w = w,
                    .y = y,
                    .l1_w = l1_w,
                    .l1_sf = l1_sf,
                    .l2_w = l2_w,
                    .l2_sf = l2_sf,
                    .act = act,
                    .rows = plan.ring_rows,
                    .align = align};
  for (int64_t wave = 0; wave < plan.waves; ++wave) {
    const int64_t first = wave * plan.experts_per_wave;
    run_wave(g, p, wave, first, std::min(plan.experts_per_wave, e - first));
  }
  dev.launch("dga_npu_launch_mega_moe_combine_barrier", 1, &p, ranks);
  check_status(dev, w, s, buf.rank);
  dev.launch("dga_npu_launch_mega_moe_combine", unsigned(dev.vector_cores()), &p, y.size(0) * s.hidden * s.num_topk);
}

}  // namespace deepgemm_ascend::api
