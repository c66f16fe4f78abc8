// Mega MoE's data moves, one source for the host and the Ascend 950's vector cores:
//   route    (one core) every rank's topk_idx scanned twice: the rows each local expert receives, then their
//            ring rows: wave by wave (experts_per_wave experts a wave), each expert's rows from a start aligned
//            to p.align, in (rank, token, slot) order; the experts' row ends within their wave and recv_stats
//   gather   the wave's ring rows that hold a token (each expert's, from its aligned start to its end): the
//            token's x row, its UE8M0 scale row (FP8) and its routing weight, from the token's rank
//   scatter  those rows' o rows into the combine slot (slot, token) of the token's rank
//   combine  this rank's tokens: y[t] = bf16(sum over its valid slots, ascending, of float(slot))
// The ring table (p.src) holds int32 (rank, token, slot) per ring row of every wave; only the rows between an
// expert's aligned start and its end are written and read (the rows between experts are padding). The
// waves are fixed by the buffer's sizes (heuristics::mega_moe_waves), not by the counts, so no target reads
// the counts back before launching a wave: a wave holds every row its experts can receive when no token lists
// an expert twice. Each step's `m` is a target's element work for it: scalar reads and writes of the route's
// tables, row copies between ranks' buffers, the combine's sums (the host's Route, Copies and Combine in
// host/host_mega_moe_vector.hpp; the NPU's NpuMegaRoute, NpuMegaCopies and NpuMegaCombine in
// cpp/npu/npu_mega_moe.hpp). A failure is recorded in p.status, its first one kept; the host raises it after
// the route, the npu-model backend after the route's launch.
#pragma once

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/macros.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"

namespace deepgemm_ascend::kernel {

constexpr int64_t kMegaRowFields = 3;  // int32 (rank, token, slot) per ring row

// The first ring row of an expert whose wave's previous expert ended at row `end`.
DGA_HOST_DEVICE int64_t mega_expert_start(int64_t end, int64_t align) { return (end + align - 1) / align * align; }

// The local experts' rows in every rank's topk_idx, in (rank, token, slot) order: counted (place false) or
// written to their ring rows at the experts' cursors (place true; rows past an expert's limit are dropped).
// An id that is neither -1 nor an expert's is a failure (recorded by the count) and skipped.
template <class M>
DGA_DEVICE void mega_scan(M& m, const DgaMegaMoeParams& p, bool place) {
  const int64_t first = p.rank * p.experts_per_rank, experts = p.ranks * p.experts_per_rank;
  for (int64_t r = 0; r < p.ranks; ++r) {
    const int64_t tokens = m.tokens_of(r), chunk = m.topk_chunk();
    for (int64_t t0 = 0; t0 < tokens; t0 += chunk) {
      const int64_t n = tokens - t0 < chunk ? tokens - t0 : chunk;
      const auto ids = m.topk_ids(r, t0, n);
      for (int64_t j = 0; j < n * p.topk; ++j) {
        const int64_t id = ids.GetValue(uint32_t(j)), e = id - first;
        if (!place && id != -1 && (id < 0 || id >= experts))
          m.fail(kDgaMegaMoeBadExpert, int32_t(r), int32_t(t0 + j / p.topk), int32_t(j % p.topk), int32_t(id));
        if (e < 0 || e >= p.experts_per_rank) continue;  // -1 or another rank's expert
        const int32_t at = m.count(e);
        m.set_count(e, at + 1);
        if (place && at < m.count(p.experts_per_rank + e))
          m.set_row(at, int32_t(r), int32_t(t0 + j / p.topk), int32_t(j % p.topk));
      }
    }
  }
}

// Each wave's experts from aligned starts: counts [0, E) become the experts' cursors (in table rows), [E, 2E)
// their limits. An expert whose rows pass the end of its wave's ring is a failure; it keeps the rows that fit.
template <class M>
DGA_DEVICE void mega_plan(M& m, const DgaMegaMoeParams& p) {
  const int64_t e_local = p.experts_per_rank, rows = p.ring_rows;
  for (int64_t w = 0; w * p.experts_per_wave < e_local; ++w) {
    int64_t row = 0;
    for (int64_t e = w * p.experts_per_wave; e < e_local && e < (w + 1) * p.experts_per_wave; ++e) {
      const int64_t start = mega_expert_start(row, p.align), n = m.count(e);
      row = start + n;
      if (row > rows) {
        m.fail(kDgaMegaMoeRingOverflow, int32_t(e), int32_t(n), 0, 0);
        row = rows;
      }
      m.set_count(e, int32_t(w * rows + start));
      m.set_count(e_local + e, int32_t(w * rows + row));
      m.set_end(e, int32_t(row));
      m.add_received(e, int32_t(n));
    }
  }
}

// The route, on core 0 of the launch. After a failure the route goes on (a device's status is not read
// back): the other rows are routed as they would be.
template <class M>
DGA_DEVICE void mega_route(M& m, const DgaMegaMoeParams& p) {
  if (m.core() != 0) return;
  for (int64_t e = 0; e < p.experts_per_rank; ++e) m.set_count(e, 0);
  mega_scan(m, p, false);
  mega_plan(m, p);
  mega_scan(m, p, true);
  m.routed();
}

struct MegaRow {
  int32_t rank, token, slot;
};

// The wave's experts in turn, each with its rows [begin, end) of the wave's ring (from the route's ends).
struct MegaWaveExpert {
  int64_t e, begin, end;
};
template <class M>
DGA_DEVICE MegaWaveExpert mega_first_expert(M& m, const DgaMegaMoeParams& p) {
  const int64_t e = p.wave * p.experts_per_wave;
  return {e, 0, e < p.experts_per_rank ? m.end(e) : 0};
}
template <class M>
DGA_DEVICE MegaWaveExpert mega_next_expert(M& m, const DgaMegaMoeParams& p, const MegaWaveExpert& x) {
  const int64_t e = x.e + 1, begin = mega_expert_start(x.end, p.align);
  return {e, begin, e < p.experts_per_rank ? m.end(e) : begin};
}
DGA_HOST_DEVICE bool mega_in_wave(const MegaWaveExpert& x, const DgaMegaMoeParams& p) {
  return x.e < p.experts_per_rank && x.e < (p.wave + 1) * p.experts_per_wave;
}

template <class M>
DGA_DEVICE void mega_gather(M& m, const DgaMegaMoeParams& p) {
  const int64_t row_bytes = p.hidden * (p.fp8 ? 1 : 2), sf_bytes = p.hidden / arch::MxFormat::kMxBlockK;
  constexpr int64_t kF32 = 4;
  for (MegaWaveExpert x = mega_first_expert(m, p); mega_in_wave(x, p); x = mega_next_expert(m, p, x))
    for (int64_t i = x.begin + m.core(); i < x.end; i += m.cores()) {
      const MegaRow s = m.row(p.wave * p.ring_rows + i);
      const uint64_t peer = p.peers[s.rank];
      m.copy(p.ring + uint64_t(i * row_bytes), peer + uint64_t(p.x_off + s.token * row_bytes), row_bytes);
      if (p.fp8) m.copy_scales(i, peer + uint64_t(p.x_sf_off + s.token * sf_bytes), sf_bytes);
      m.copy(p.weights + uint64_t(i * kF32),
             peer + uint64_t(p.topk_weights_off + (s.token * p.topk + s.slot) * kF32), kF32);
    }
}

template <class M>
DGA_DEVICE void mega_scatter(M& m, const DgaMegaMoeParams& p) {
  const int64_t row_bytes = p.hidden * 2;
  for (MegaWaveExpert x = mega_first_expert(m, p); mega_in_wave(x, p); x = mega_next_expert(m, p, x))
    for (int64_t i = x.begin + m.core(); i < x.end; i += m.cores()) {
      const MegaRow s = m.row(p.wave * p.ring_rows + i);
      m.copy(p.peers[s.rank] + uint64_t(p.combine_off + (s.slot * p.n + s.token) * row_bytes),
             p.o + uint64_t(i * row_bytes), row_bytes);
    }
}

// The tokens round-robin over the cores, each in chunks of the target's combine_values() columns.
template <class M>
DGA_DEVICE void mega_combine(M& m, const DgaMegaMoeParams& p) {
  const uint64_t me = p.peers[p.rank];
  const int64_t chunk = m.combine_values();
  for (int64_t t = m.core(); t < p.tokens; t += m.cores()) {
    const int64_t next = t + m.cores();
    const auto idx = m.topk_row(t, next < p.tokens ? next : -1);
    for (int64_t c0 = 0; c0 < p.hidden; c0 += chunk) {
      const uint32_t n = uint32_t(p.hidden - c0 < chunk ? p.hidden - c0 : chunk);
      m.clear(n);
      for (int64_t k = 0; k < p.topk; ++k)
        if (idx.GetValue(uint32_t(k)) >= 0)
          m.add(me + uint64_t(p.combine_off + ((k * p.n + t) * p.hidden + c0) * 2), n);
      m.store_sum(p.y + uint64_t((t * p.y_stride + c0) * 2), n);
    }
  }
}

}  // namespace deepgemm_ascend::kernel
