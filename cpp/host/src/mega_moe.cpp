#include "deepgemm_ascend/host/mega_moe.hpp"

#include <algorithm>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/host/host_mega_moe_vector.hpp"
#include "deepgemm_ascend/kernel/mega_moe_moves.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kDispatchBarrier = 0, kCombineBarrier = 1;

// Addresses inside one rank's symmetric buffer.
struct Buffer {
  const MegaMoeArgs& a;
  uint8_t* base;

  int64_t h() const { return a.shape.hidden; }
  int64_t tb() const { return a.shape.token_bytes(); }
  uint8_t* at(const comm::Region& r, int64_t byte) const { return base + r.offset + byte; }
  // MN-major ring scales: scale j of ring row r.
  uint8_t* ring_sf(const comm::Region& r, int64_t row, int64_t j) const {
    return at(r, ring_scale_byte(row, j, a.regions.sf_ring_rows));
  }
  layout::ScaleRef ring_scales(const comm::Region& r) const {
    const int64_t word = block::kScalesPerWord;
    return {.base = at(r, 0), .ue8m0 = true, .pack = int(word), .mn_stride = word,
            .k_stride = word * a.regions.sf_ring_rows, .gran_mn = 1, .gran_k = block::kSwigluScaleGroup};
  }
};

// The data moves' parameters (kernel/mega_moe_moves.hpp) at this rank's buffer and the work's tables.
DgaMegaMoeParams moves_params(const MegaMoeArgs& args, MegaMoeWork& work) {
  const auto& s = args.shape;
  const comm::PeerGroup& peers = *args.peers;
  const auto addr = [](const void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); };
  const Buffer me{args, peers.base(peers.rank())};
  DgaMegaMoeParams p{};  // sync_off, max_polls: the host's barriers are the peer group's
  for (int r = 0; r < peers.size(); ++r) p.peers[r] = addr(peers.base(r));
  p.rank = peers.rank(), p.ranks = peers.size(), p.experts_per_rank = s.experts_per_rank(), p.topk = s.num_topk;
  p.hidden = s.hidden, p.tokens = args.y.rows, p.n = s.num_max_tokens_per_rank;
  p.x_off = args.regions.x.offset, p.topk_idx_off = args.regions.topk_idx.offset;
  p.topk_weights_off = args.regions.topk_weights.offset, p.combine_off = args.regions.combine.offset;
  work.table.resize(size_t(args.waves * args.ring_rows * kernel::kMegaRowFields));  // the route writes its rows
  work.ends.assign(size_t(s.experts_per_rank()), 0);
  p.ends = addr(work.ends.data()), p.src = addr(work.table.data());
  p.weights = addr(me.at(args.regions.l1_weights, 0)), p.ring = addr(me.at(args.regions.l1_tokens, 0));
  p.y = addr(args.y.at<uint16_t>(0, 0)), p.recv_stats = addr(args.recv_stats), p.status = addr(work.status);
  p.ring_rows = args.ring_rows, p.experts_per_wave = args.experts_per_wave, p.waves = args.waves;
  p.align = args.align, p.y_stride = args.y.row_stride;
  p.fp8 = s.fp8 ? 1 : 0, p.x_sf_off = args.regions.x_sf.offset, p.ring_sf = addr(me.at(args.regions.l1_sf, 0));
  return p;
}

kernel::GemmProblem problem(const layout::MatrixRef& a, const layout::ScaleRef& sa, const layout::MatrixRef& b,
                    const layout::ScaleRef& sb, uint16_t* d, int64_t n, bool scaled) {
  kernel::GemmProblem p;
  p.a = a;
  p.b = b;
  p.epilogue.d = {.base = d, .origin = 0, .rows = a.rows, .cols = n, .row_stride = n, .col_stride = 1,
                   .bits = core::kBf16Bits};
  p.epilogue.d_dtype = core::DType::kBF16;
  p.scaling = {scaled, sa, sb};
  return p;
}

// The scratch of the longest wave (its last expert's end is the largest), then each wave's GEMM problems, one
// per expert with rows (at its aligned start, to its end).
void plan_waves(const MegaMoeArgs& args, MegaMoeWork& work, std::vector<uint16_t>& h, std::vector<uint16_t>& o) {
  const auto& s = args.shape;
  const Buffer me{args, args.peers->base(args.peers->rank())};
  const int64_t e_local = s.experts_per_rank(), hid = s.hidden, inter = s.intermediate_hidden;
  const bool fp8 = s.fp8;
  const int bits = fp8 ? 8 : 16;
  const tile::OperandFormat fa = fp8 ? tile::OperandFormat::kE4M3 : tile::OperandFormat::kBF16;
  const tile::OperandFormat fb = fp8 ? tile::OperandFormat::kE2M1 : tile::OperandFormat::kBF16;
  const layout::ScaleRef sa1 = me.ring_scales(args.regions.l1_sf), sa2 = me.ring_scales(args.regions.l2_sf);
  const int64_t max_rows = work.ends.empty() ? 0 : *std::max_element(work.ends.begin(), work.ends.end());
  h.resize(size_t(max_rows * 2 * inter));
  o.resize(size_t(max_rows * hid));
  work.h = h.data();
  work.o = o.data();
  work.moves.o = uint64_t(reinterpret_cast<uintptr_t>(work.o));
  work.waves.clear();
  work.waves.reserve(size_t(args.waves));  // no reallocation: the GEMM args point into each wave's problems
  for (int64_t first = 0; first < e_local; first += args.experts_per_wave) {
    MegaMoeWave w;
    w.first = first;
    w.last = std::min(e_local, first + args.experts_per_wave);
    int64_t end = 0;
    for (int64_t e = w.first; e < w.last; ++e) {
      const int64_t r0 = kernel::mega_expert_start(end, args.align), m = work.ends[size_t(e)] - r0;
      end = work.ends[size_t(e)];
      if (m == 0) continue;
      const MegaMoeExpert& ex = args.experts[e];
      const layout::MatrixRef a1{.base = me.at(args.regions.l1_tokens, 0), .origin = r0 * hid, .rows = m, .cols = hid,
                                 .row_stride = hid, .col_stride = 1, .bits = bits};
      const layout::MatrixRef a2{.base = me.at(args.regions.l2_tokens, 0), .origin = r0 * inter, .rows = m,
                                 .cols = inter, .row_stride = inter, .col_stride = 1, .bits = bits};
      w.experts.push_back(e);
      w.l1.push_back(problem(a1, sa1.shifted(r0), ex.w1, ex.sf1, work.h + r0 * 2 * inter, 2 * inter, fp8));
      w.l2.push_back(problem(a2, sa2.shifted(r0), ex.w2, ex.sf2, work.o + r0 * hid, hid, fp8));
    }
    w.l1_args = {.problems = w.l1.data(), .num_problems = int64_t(w.l1.size()), .config = args.l1_config,
                 .operands = {fa, fb}, .scaled = fp8};
    w.l2_args = {.problems = w.l2.data(), .num_problems = int64_t(w.l2.size()), .config = args.l2_config,
                 .operands = {fa, fb}, .scaled = fp8};
    work.waves.push_back(std::move(w));
  }
}

// SwiGLU over the rows of the wave's experts (its first GEMM's problems), round-robin over the cores.
void activate(const tile::host::Core& core, const MegaMoeArgs& args, const MegaMoeWork& work, const MegaMoeWave& w) {
  const Buffer me{args, args.peers->base(args.peers->rank())};
  const int64_t hid = args.shape.hidden, inter = args.shape.intermediate_hidden;
  const auto* weights = reinterpret_cast<const float*>(me.at(args.regions.l1_weights, 0));
  for (const kernel::GemmProblem& q : w.l1) {
    const int64_t r0 = q.a.origin / hid;
    for (int64_t r = r0 + core.block_idx(); r < r0 + q.a.rows; r += core.block_num())
      block::swiglu_row(work.h + r * 2 * inter, inter, weights[r], args.act,
                        me.at(args.regions.l2_tokens, r * inter * me.tb()),
                        {me.ring_sf(args.regions.l2_sf, r, 0), block::kScalesPerWord * args.regions.sf_ring_rows});
  }
}

// The wave's first or second GEMM on this core, its problems in `local`: an FP8 x FP4 problem folds when its
// expert's weight scales and its rows' activation scales all fold (every core decides the same, from the
// scales in the ring after the grid sync that follows their writing).
void run_gemm(tile::host::Core& core, const MegaMoeArgs& args, const MegaMoeWave& w, bool second,
              std::vector<kernel::GemmProblem>& local) {
  kernel::GemmArgs g = second ? w.l2_args : w.l1_args;
  if (g.scaled) {
    local.assign(g.problems, g.problems + g.num_problems);
    bool all = true;
    for (size_t i = 0; i < local.size(); ++i) {
      kernel::GemmProblem& p = local[i];
      const MegaMoeExpert& ex = args.experts[w.experts[i]];
      const bool weights_fold = second ? ex.sf2_folds : ex.sf1_folds;
      p.scaling.fold = weights_fold && layout::all_scales_fold(p.scaling.a, p.a.rows, p.a.cols);
      all = all && p.scaling.fold;
    }
    g.problems = local.data();
    if (all) g.config = second ? args.l2_fold_config : args.l1_fold_config;
  }
  tile::host::BufferScope scope(core);
  kernel::gemm<tile::host::HostTarget>(core, g);
}

}  // namespace

void raise_mega_moe_route_status(const int32_t* status, int64_t rank, int64_t num_experts) {
  DGA_REQUIRE(status[0] != kDgaMegaMoeRingOverflow, kValue, "topk_idx", "local expert ", status[1], " of rank ", rank,
              " receives ", status[2], " rows, more than its wave's ring holds (does a token list the same expert ",
              "twice?)");
  DGA_REQUIRE(status[0] != kDgaMegaMoeBadExpert, kValue, "topk_idx", "rank ", status[1], " token ", status[2], " slot ",
              status[3], ": expert id ", status[4], " is outside [0, ", num_experts, ") and is not -1");
}

void mega_moe(tile::host::Core& core, tile::host::GridSync& grid, const MegaMoeArgs& args, MegaMoeWork& work) {
  static thread_local std::vector<uint16_t> h_scratch, o_scratch;  // block 0's thread owns them
  if (core.block_idx() == 0) {
    args.peers->barrier(kDispatchBarrier, "dispatch");
    work.moves = moves_params(args, work);
    HostMegaMoeVector::Route route(core, work.moves, *args.peers);
    kernel::mega_route(route, work.moves);
    raise_mega_moe_route_status(work.status, args.peers->rank(), args.shape.num_experts);
    plan_waves(args, work, h_scratch, o_scratch);
  }
  grid.sync();
  DgaMegaMoeParams p = work.moves;  // this core's, with its wave
  const HostMegaMoeVector::Copies copies(core, p, args.regions.sf_ring_rows);
  std::vector<kernel::GemmProblem> local;  // this core's problems of the current GEMM
  for (size_t wave = 0; wave < work.waves.size(); ++wave) {
    const MegaMoeWave& w = work.waves[wave];
    p.wave = int64_t(wave);
    kernel::mega_gather(copies, p);
    grid.sync();
    run_gemm(core, args, w, false, local);
    grid.sync();
    activate(core, args, work, w);
    grid.sync();
    run_gemm(core, args, w, true, local);
    grid.sync();
    kernel::mega_scatter(copies, p);
  }
  grid.sync();
  if (core.block_idx() == 0) args.peers->barrier(kCombineBarrier, "combine");
  grid.sync();
  HostMegaMoeVector::Combine combine(core, p);
  kernel::mega_combine(combine, p);
}

}  // namespace deepgemm_ascend::tile::host
