#include "deepgemm_ascend/host/mega_moe.hpp"

#include <algorithm>
#include <cstring>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

using block::kScalesPerWord;
using block::kSwigluScaleGroup;
constexpr int64_t kCombineChunk = 256;  // fp32 accumulators of one combine step
constexpr int kDispatchBarrier = 0, kCombineBarrier = 1;

// Addresses inside one rank's symmetric buffer.
struct Buffer {
  const MegaMoeArgs& a;
  uint8_t* base;

  int64_t h() const { return a.shape.hidden; }
  int64_t tb() const { return a.shape.token_bytes(); }
  uint8_t* at(const comm::Region& r, int64_t byte) const { return base + r.offset + byte; }
  uint8_t* x(int64_t t) const { return at(a.regions.x, t * h() * tb()); }
  uint8_t* x_sf(int64_t t) const { return at(a.regions.x_sf, t * (h() / block::kSwigluScaleGroup)); }
  const int64_t* topk_idx(int64_t t) const {
    return reinterpret_cast<const int64_t*>(at(a.regions.topk_idx, 0)) + t * a.shape.num_topk;
  }
  const float* topk_weights(int64_t t) const {
    return reinterpret_cast<const float*>(at(a.regions.topk_weights, 0)) + t * a.shape.num_topk;
  }
  uint16_t* slot(int64_t k, int64_t t) const {
    return reinterpret_cast<uint16_t*>(
        at(a.regions.combine, (k * a.shape.num_max_tokens_per_rank + t) * h() * int64_t(sizeof(uint16_t))));
  }
  // MN-major ring scales: scale j of ring row r.
  uint8_t* ring_sf(const comm::Region& r, int64_t row, int64_t j) const {
    return at(r, ((j / block::kScalesPerWord) * a.regions.sf_ring_rows + row) * block::kScalesPerWord + j % block::kScalesPerWord);
  }
  layout::ScaleRef ring_scales(const comm::Region& r) const {
    const int64_t word = block::kScalesPerWord;
    return {.base = at(r, 0), .ue8m0 = true, .pack = int(word), .mn_stride = word,
            .k_stride = word * a.regions.sf_ring_rows, .gran_mn = 1, .gran_k = block::kSwigluScaleGroup};
  }
};

block::RowRange share(int64_t count, const tile::host::Core& core) {
  return block::contiguous_share(count, core.block_idx(), core.block_num());
}

// Rows per local expert, in (rank, token, slot) order; validates every routed expert id.
void route(const MegaMoeArgs& args, MegaMoeWork& work) {
  const auto& s = args.shape;
  const comm::PeerGroup& peers = *args.peers;
  const int64_t e_local = s.experts_per_rank(), first_expert = int64_t(peers.rank()) * e_local;
  std::vector<std::vector<MegaMoeRow>> per_expert(static_cast<size_t>(e_local));
  for (int r = 0; r < peers.size(); ++r) {
    const Buffer src{args, peers.base(r)};
    const int64_t tokens = peers.header(r).num_tokens;
    for (int64_t t = 0; t < tokens; ++t) {
      const int64_t* idx = src.topk_idx(t);
      for (int64_t k = 0; k < s.num_topk; ++k) {
        const int64_t e = idx[k];
        if (e == -1) continue;
        DGA_REQUIRE(e >= 0 && e < s.num_experts, kValue, "topk_idx", "rank ", r, " token ", t, " slot ", k,
                    ": expert id ", e, " is outside [0, ", s.num_experts, ") and is not -1");
        if (e >= first_expert && e < first_expert + e_local)
          per_expert[size_t(e - first_expert)].push_back({r, int32_t(t), int32_t(k)});
      }
    }
  }
  work.rows.clear();
  work.expert_begin.assign(1, 0);
  for (int64_t e = 0; e < e_local; ++e) {
    const auto& rows = per_expert[size_t(e)];
    if (args.recv_stats) args.recv_stats[e] += int32_t(rows.size());
    work.rows.insert(work.rows.end(), rows.begin(), rows.end());
    work.expert_begin.push_back(int64_t(work.rows.size()));
  }
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

// Waves of consecutive experts that fit the ring, with their GEMM problems.
void plan_waves(const MegaMoeArgs& args, MegaMoeWork& work, std::vector<uint16_t>& h, std::vector<uint16_t>& o) {
  const auto& s = args.shape;
  const Buffer me{args, args.peers->base(args.peers->rank())};
  const int64_t e_local = s.experts_per_rank(), hid = s.hidden, inter = s.intermediate_hidden;
  const bool fp8 = s.fp8;
  const int bits = fp8 ? 8 : 16;
  const tile::OperandFormat fa = fp8 ? tile::OperandFormat::kE4M3 : tile::OperandFormat::kBF16;
  const tile::OperandFormat fb = fp8 ? tile::OperandFormat::kE2M1 : tile::OperandFormat::kBF16;
  work.waves.clear();
  int64_t max_rows = 0;
  for (int64_t e = 0; e < e_local; ++e) {
    const int64_t rows = work.expert_begin[size_t(e) + 1] - work.expert_begin[size_t(e)];
    // The ring holds num_max_tokens_per_rank x ranks rows: one row per token of every rank. More only
    // happens when a token names the same expert in two slots.
    DGA_REQUIRE(rows <= s.num_ring_tokens, kValue, "topk_idx", "local expert ", e, " of rank ", args.peers->rank(),
                " receives ", rows, " rows, more than the ", s.num_ring_tokens,
                " ring tokens (does a token list the same expert twice?)");
  }
  for (int64_t e = 0; e < e_local;) {
    MegaMoeWave w;
    w.first = e;
    w.row0 = work.expert_begin[size_t(e)];
    while (e < e_local && work.expert_begin[size_t(e) + 1] - w.row0 <= s.num_ring_tokens) ++e;
    w.last = e;  // at least one expert: each fits the ring (checked above)
    w.rows = work.expert_begin[size_t(e)] - w.row0;
    max_rows = std::max(max_rows, w.rows);
    work.waves.push_back(std::move(w));
  }
  h.resize(size_t(max_rows * 2 * inter));
  o.resize(size_t(max_rows * hid));
  work.h = h.data();
  work.o = o.data();
  const layout::ScaleRef sa1 = me.ring_scales(args.regions.l1_sf), sa2 = me.ring_scales(args.regions.l2_sf);
  for (auto& w : work.waves) {
    for (int64_t e = w.first; e < w.last; ++e) {
      const int64_t r0 = work.expert_begin[size_t(e)] - w.row0, m = work.expert_begin[size_t(e) + 1] - w.row0 - r0;
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
  }
}

void gather(const tile::host::Core& core, const MegaMoeArgs& args, const MegaMoeWork& work, const MegaMoeWave& w) {
  const Buffer me{args, args.peers->base(args.peers->rank())};
  const int64_t hid = args.shape.hidden, row_bytes = hid * me.tb(), groups = hid / block::kSwigluScaleGroup;
  auto* weights = reinterpret_cast<float*>(me.at(args.regions.l1_weights, 0));
  const auto [b, e] = share(w.rows, core);
  for (int64_t r = b; r < e; ++r) {
    const MegaMoeRow& row = work.rows[size_t(w.row0 + r)];
    const Buffer src{args, args.peers->base(row.rank)};
    std::memcpy(me.at(args.regions.l1_tokens, r * row_bytes), src.x(row.token), size_t(row_bytes));
    weights[r] = src.topk_weights(row.token)[row.slot];
    if (!args.shape.fp8) continue;
    const uint8_t* sf = src.x_sf(row.token);
    for (int64_t j = 0; j < groups; ++j) *me.ring_sf(args.regions.l1_sf, r, j) = sf[j];
  }
}

void activate(const tile::host::Core& core, const MegaMoeArgs& args, const MegaMoeWork& work, const MegaMoeWave& w) {
  const Buffer me{args, args.peers->base(args.peers->rank())};
  const int64_t inter = args.shape.intermediate_hidden;
  const auto* weights = reinterpret_cast<const float*>(me.at(args.regions.l1_weights, 0));
  const auto [b, e] = share(w.rows, core);
  for (int64_t r = b; r < e; ++r)
    block::swiglu_row(work.h + r * 2 * inter, inter, weights[r], args.act,
                      me.at(args.regions.l2_tokens, r * inter * me.tb()),
                      {me.ring_sf(args.regions.l2_sf, r, 0), block::kScalesPerWord * args.regions.sf_ring_rows});
}

void scatter(const tile::host::Core& core, const MegaMoeArgs& args, const MegaMoeWork& work, const MegaMoeWave& w) {
  const int64_t hid = args.shape.hidden;
  const auto [b, e] = share(w.rows, core);
  for (int64_t r = b; r < e; ++r) {
    const MegaMoeRow& row = work.rows[size_t(w.row0 + r)];
    const Buffer dst{args, args.peers->base(row.rank)};
    std::memcpy(dst.slot(row.slot, row.token), work.o + r * hid, size_t(hid) * sizeof(uint16_t));
  }
}

void combine(const tile::host::Core& core, const MegaMoeArgs& args) {
  const Buffer me{args, args.peers->base(args.peers->rank())};
  const int64_t hid = args.shape.hidden;
  float acc[kCombineChunk];
  const auto [b, e] = share(args.y.rows, core);
  for (int64_t t = b; t < e; ++t) {
    const int64_t* idx = me.topk_idx(t);
    auto* y = args.y.at<uint16_t>(t, 0);
    for (int64_t c0 = 0; c0 < hid; c0 += kCombineChunk) {
      const int64_t n = std::min(kCombineChunk, hid - c0);
      std::fill(acc, acc + n, 0.0f);
      for (int64_t k = 0; k < args.shape.num_topk; ++k) {
        if (idx[k] < 0) continue;
        const uint16_t* slot = me.slot(k, t) + c0;
        for (int64_t c = 0; c < n; ++c) acc[c] += core::bf16_to_float(slot[c]);
      }
      for (int64_t c = 0; c < n; ++c) y[c0 + c] = core::float_to_bf16(acc[c]);
    }
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

void mega_moe(tile::host::Core& core, tile::host::GridSync& grid, const MegaMoeArgs& args, MegaMoeWork& work) {
  static thread_local std::vector<uint16_t> h_scratch, o_scratch;  // block 0's thread owns them
  if (core.block_idx() == 0) {
    args.peers->barrier(kDispatchBarrier, "dispatch");
    route(args, work);
    plan_waves(args, work, h_scratch, o_scratch);
  }
  grid.sync();
  std::vector<kernel::GemmProblem> local;  // this core's problems of the current GEMM
  for (const MegaMoeWave& w : work.waves) {
    gather(core, args, work, w);
    grid.sync();
    run_gemm(core, args, w, false, local);
    grid.sync();
    activate(core, args, work, w);
    grid.sync();
    run_gemm(core, args, w, true, local);
    grid.sync();
    scatter(core, args, work, w);
  }
  grid.sync();
  if (core.block_idx() == 0) args.peers->barrier(kCombineBarrier, "combine");
  grid.sync();
  combine(core, args);
}

}  // namespace deepgemm_ascend::tile::host
