// Mega MoE on the NPU: the kernels around its GEMMs and SwiGLU stage (mega_moe.asc), on the vector cores.
//   barrier   block 0: publishes this rank's token count (the dispatch barrier), writes the epoch into its
//             arrival slot in every rank's sync block (MTE3), then polls its own block's slots (MTE2) until
//             every rank arrived, or gives up after max_polls and records the late rank in status
//   route     block 0: every rank's topk_idx (MTE2, in chunks) scanned twice: the rows each local expert
//             receives, then their ring rows: wave by wave, each expert's rows from an aligned start, in
//             (rank, token, slot) order (the host Mega MoE's order); the psum ends and recv_stats
//   gather    the wave's ring rows: the token's x row (bf16, or e4m3 and its UE8M0 scale row) and its
//             routing weight, from its rank's buffer
//   scatter   the wave's o rows into the combine slot (slot, token) of the token's rank
//   combine   this rank's tokens: y[t] = bf16(sum over its valid slots, ascending, of float(slot))
// Gather, scatter and combine move rows GM -> UB -> GM through rings of UB stages ordered by events, so that
// the loads of the next rows are in flight while the earlier ones are stored (or summed); the barrier and the
// route (one core, a few steps) order their phases by PIPE_ALL barriers. The cross-rank order is the
// barriers' (and the stream's between launches). Part of the NPU primitive layer; NOT
// validated on hardware (nor the visibility of one rank's MTE writes to another's reads, which the 950's
// documentation leaves to HCCL).
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

namespace mega {

constexpr uint32_t kArrivalsAt = 8;  // bytes into the sync block: the arrival epochs
constexpr uint32_t kTriple = 3;      // int32 (rank, token, slot) per ring row

// acc[i] += float(x[i]) for i < n (bf16 x in the even 16-bit slots of an unpacked load).
template <class Arch>
__simd_vf__ inline void add_bf16(__ubuf__ float* acc, __ubuf__ bfloat16_t* x, uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<bfloat16_t> h;
  R::RegTensor<float> v, a;
  uint32_t count = n;
  for (uint16_t i = 0; i < uint16_t((n + kL - 1) / kL); ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign<bfloat16_t, R::LoadDist::DIST_UNPACK_B16>(h, x + i * kL);
    R::Cast<float, bfloat16_t, vreg::kToF32>(v, h, m);
    R::LoadAlign(a, acc + i * kL);
    R::Add(a, a, v, m);
    R::StoreAlign(acc + i * kL, a, m);
  }
}

template <class Arch>
__simd_vf__ inline void zero(__ubuf__ float* acc, uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = vreg::kLanes<Arch>;
  R::RegTensor<float> z;
  uint32_t count = n;
  for (uint16_t i = 0; i < uint16_t((n + kL - 1) / kL); ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::Duplicate(z, 0.0f, m);
    R::StoreAlign(acc + i * kL, z, m);
  }
}

}  // namespace mega

template <class Arch = arch::Ascend950>
class MegaMoeKernels {
  static constexpr uint32_t kB16 = 2, kF32 = 4, kI32 = 4, kI64 = 8;
  static constexpr int64_t kMxBlockK = arch::MxFormat::kMxBlockK;  // values per UE8M0 scale byte
  static constexpr uint32_t kCopyBytes = Arch::kUBBytes / 4;  // buf_ and aux_: the barrier's and the route's
  // The gather's and the scatter's copies: kCopyStages stages of kStageBytes in flight (a row of 7168 bf16
  // values in one stage).
  static constexpr int kCopyStages = 4;
  static constexpr uint32_t kStageBytes = 16 * 1024;
  // values of one combine step: the fp32 sums fill half of buf_; each slot's bf16 values a stage of its ring
  static constexpr uint32_t kCombineValues = kCopyBytes / kF32 / 2 / vreg::kLanes<Arch> * vreg::kLanes<Arch>;
  using CopyRing = Ring<kCopyStages, Pipe::kMTE2, Pipe::kMTE3>;

 public:
  __aicore__ inline MegaMoeKernels(VecCtx<Arch>& ctx, const DgaMegaMoeParams& p)
      : ctx_(ctx), p_(p), buf_(ctx.alloc(Pos::kUB, kCopyBytes)), aux_(ctx.alloc(Pos::kUB, kCopyBytes)) {}

  __aicore__ inline void barrier(bool publish_tokens) {
    if (AscendC::GetBlockIdx() != 0) return;
    barrier_all();  // this core's earlier writes precede the arrival
    auto slot = ctx_.template tensor<uint64_t>(buf_);
    if (publish_tokens) {
      ctx_.template tensor<int64_t>(buf_).SetValue(0, p_.tokens);
      barrier_all();
      store(p_.peers[p_.rank] + uint64_t(p_.sync_off), buf_, kI64);
      barrier_all();
    }
    // The epoch: one past this rank's own slot in its own block (only this rank writes it; a fresh buffer
    // is zero), so every rank counts its barriers alike.
    const uint64_t mine = p_.peers[p_.rank] + uint64_t(p_.sync_off + mega::kArrivalsAt);
    auto arrived = ctx_.template tensor<uint64_t>(aux_);
    load(aux_, mine, uint32_t(p_.ranks) * kI64);
    barrier_all();
    const uint64_t epoch = arrived.GetValue(uint32_t(p_.rank)) + 1;
    slot.SetValue(0, epoch);
    barrier_all();
    for (int64_t r = 0; r < p_.ranks; ++r)
      store(p_.peers[r] + uint64_t(p_.sync_off + mega::kArrivalsAt + p_.rank * kI64), buf_, kI64);
    for (uint64_t poll = 0; poll < p_.max_polls; ++poll) {
      barrier_all();
      load(aux_, mine, uint32_t(p_.ranks) * kI64);
      barrier_all();
      int64_t late = -1;
      for (int64_t r = 0; r < p_.ranks && late < 0; ++r)
        if (arrived.GetValue(uint32_t(r)) < epoch) late = r;
      if (late < 0) return;
      if (poll + 1 == p_.max_polls) fail(kDgaMegaMoePeerLate, late);
    }
  }

  __aicore__ inline void route() {
    if (AscendC::GetBlockIdx() != 0) return;
    const int64_t e_local = p_.experts_per_rank, rows = p_.ring_rows;
    // counts, then cursors (and, after them, limits) of the local experts, int32 in buf_
    auto counts = ctx_.template tensor<int32_t>(buf_);
    auto src = gm_at<int32_t>(p_.src);
    for (int64_t e = 0; e < e_local; ++e) counts.SetValue(uint32_t(e), 0);
    for (int64_t i = 0; i < p_.waves * rows; ++i) src.SetValue(uint64_t(i * mega::kTriple), -1);
    scan(false);
    // each wave's ring: experts from aligned starts; a wave holds experts_per_wave experts
    auto ends = gm_at<int32_t>(p_.ends);
    for (int64_t w = 0; w * p_.experts_per_wave < e_local; ++w) {
      int64_t row = 0;
      for (int64_t e = w * p_.experts_per_wave; e < e_local && e < (w + 1) * p_.experts_per_wave; ++e) {
        const int64_t start = (row + p_.align - 1) / p_.align * p_.align, n = counts.GetValue(uint32_t(e));
        row = start + n;
        if (row > rows) fail(kDgaMegaMoeRingOverflow, e);
        row = row > rows ? rows : row;
        counts.SetValue(uint32_t(e), int32_t(w * rows + start));  // the expert's cursor and limit, in src rows
        counts.SetValue(uint32_t(e_local + e), int32_t(w * rows + row));
        ends.SetValue(uint64_t(e), int32_t(row));
        if (p_.recv_stats != 0) {
          auto stats = gm_at<int32_t>(p_.recv_stats);
          stats.SetValue(uint64_t(e), stats.GetValue(uint64_t(e)) + int32_t(n));
        }
      }
    }
    scan(true);
    AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::ENTIRE_DATA_CACHE>(src);
  }

  __aicore__ inline void gather() {
    const int64_t row_bytes = p_.hidden * (p_.fp8 ? 1 : kB16), sf_bytes = p_.hidden / kMxBlockK;
    CopyRing ring(ctx_, {{Pos::kUB, kStageBytes}}, "mega moe gather");
    for (int64_t i = AscendC::GetBlockIdx(); i < p_.ring_rows; i += AscendC::GetBlockNum()) {
      const RingRow s = ring_row(i);
      if (s.rank < 0) continue;
      const uint64_t peer = p_.peers[s.rank];
      const int64_t t = s.token, k = s.slot;
      copy(ring, p_.ring + uint64_t(i * row_bytes), peer + uint64_t(p_.x_off + t * row_bytes), row_bytes);
      if (p_.fp8)
        copy(ring, p_.ring_sf + uint64_t(i * sf_bytes), peer + uint64_t(p_.x_sf_off + t * sf_bytes), sf_bytes);
      copy(ring, p_.weights + uint64_t(i) * kF32, peer + uint64_t(p_.topk_weights_off + (t * p_.topk + k) * kF32),
           kF32);
    }
  }

  __aicore__ inline void scatter() {
    const int64_t row_bytes = p_.hidden * kB16;
    CopyRing ring(ctx_, {{Pos::kUB, kStageBytes}}, "mega moe scatter");
    for (int64_t i = AscendC::GetBlockIdx(); i < p_.ring_rows; i += AscendC::GetBlockNum()) {
      const RingRow s = ring_row(i);
      if (s.rank < 0) continue;
      const int64_t k = s.slot, t = s.token;
      copy(ring, p_.peers[s.rank] + uint64_t(p_.combine_off + (k * p_.n + t) * row_bytes),
           p_.o + uint64_t(i * row_bytes), row_bytes);
    }
  }

  // IEEE casts (an overflowing sum is inf, as on the host). The slots' chunks stream through a ring (MTE2 ->
  // V) while the earlier ones are added; the next token's topk_idx row is loaded while this one is summed.
  __aicore__ inline void combine() {
    const IeeeCasts ieee;
    const uint64_t me = p_.peers[p_.rank];
    const uint32_t idx_bytes = uint32_t(p_.topk) * kI64;
    const Tile acc{Pos::kUB, buf_.offset, kCombineValues * kF32};
    Ring<kCopyStages, Pipe::kMTE2, Pipe::kV> in(ctx_, {{Pos::kUB, kCombineValues * kB16}}, "mega moe combine slots");
    Ring<2, Pipe::kV, Pipe::kMTE3> out(ctx_, {{Pos::kUB, kCombineValues * kB16}}, "mega moe combine y");
    TopkRows rows(ctx_, aux_, me + uint64_t(p_.topk_idx_off), idx_bytes);
    for (int64_t t = AscendC::GetBlockIdx(); t < p_.tokens; t += AscendC::GetBlockNum()) {
      const int64_t next = t + AscendC::GetBlockNum();
      auto idx = rows.get(t, next < p_.tokens ? next : -1);
      for (int64_t c0 = 0; c0 < p_.hidden; c0 += kCombineValues) {
        const uint32_t n = uint32_t(p_.hidden - c0 < int64_t(kCombineValues) ? p_.hidden - c0 : kCombineValues);
        mega::zero<Arch>(ctx_.template ub<float>(acc), n);
        for (int64_t k = 0; k < p_.topk; ++k) {
          if (idx.GetValue(uint32_t(k)) < 0) continue;
          load(in.acquire(), me + uint64_t(p_.combine_off + ((k * p_.n + t) * p_.hidden + c0) * kB16), n * kB16);
          in.commit();
          mega::add_bf16<Arch>(ctx_.template ub<float>(acc), ctx_.template ub<bfloat16_t>(in.consume()), n);
          in.release();
        }
        const Tile y = out.acquire();
        vreg::convert<Arch, bfloat16_t, float>(ctx_.template ub<bfloat16_t>(y), ctx_.template ub<float>(acc), n);
        out.commit();
        store(p_.y + uint64_t((t * p_.y_stride + c0) * kB16), out.consume(), n * kB16);
        out.release();
      }
    }
  }

 private:
  // The local experts' rows in every rank's topk_idx, in (rank, token, slot) order: counted (place false) or
  // written to their ring rows at the experts' cursors (place true).
  __aicore__ inline void scan(bool place) {
    auto counts = ctx_.template tensor<int32_t>(buf_);
    auto idx = ctx_.template tensor<int64_t>(aux_);
    auto src = gm_at<int32_t>(p_.src);
    const int64_t first = p_.rank * p_.experts_per_rank, chunk = kCopyBytes / kI64 / p_.topk;
    for (int64_t r = 0; r < p_.ranks; ++r) {
      barrier_all();
      load(aux_, p_.peers[r] + uint64_t(p_.sync_off), kI64);
      barrier_all();
      const int64_t tokens = idx.GetValue(0);
      for (int64_t t0 = 0; t0 < tokens; t0 += chunk) {
        const int64_t n = tokens - t0 < chunk ? tokens - t0 : chunk;
        barrier_all();
        load(aux_, p_.peers[r] + uint64_t(p_.topk_idx_off + t0 * p_.topk * kI64), uint32_t(n * p_.topk) * kI64);
        barrier_all();
        for (int64_t j = 0; j < n * p_.topk; ++j) {
          const int64_t e = idx.GetValue(uint32_t(j)) - first;
          if (e < 0 || e >= p_.experts_per_rank) continue;  // another rank's expert, -1, or not an expert id
          const int32_t at = counts.GetValue(uint32_t(e));
          counts.SetValue(uint32_t(e), at + 1);
          if (!place || at >= counts.GetValue(uint32_t(p_.experts_per_rank + e))) continue;  // past the ring: dropped
          const uint64_t row = uint64_t(at) * mega::kTriple;
          src.SetValue(row, int32_t(r));
          src.SetValue(row + 1, int32_t(t0 + j / p_.topk));
          src.SetValue(row + 2, int32_t(j % p_.topk));
        }
      }
    }
  }

  // Where ring row i of this wave comes from (rank -1: padding), as the route wrote it.
  struct RingRow {
    int32_t rank, token, slot;
  };
  __aicore__ inline RingRow ring_row(int64_t i) const {
    auto src = gm_at<int32_t>(p_.src + uint64_t((p_.wave * p_.ring_rows + i) * mega::kTriple) * kI32);
    return {src.GetValue(0), src.GetValue(1), src.GetValue(2)};
  }

  __aicore__ inline void fail(int32_t code, int64_t detail) {
    auto s = gm_at<int32_t>(p_.status);
    s.SetValue(0, code);
    s.SetValue(1, int32_t(detail));
    AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::ENTIRE_DATA_CACHE>(s);
  }

  // bytes from GM to GM through the ring's stages, a stage at a time.
  __aicore__ inline void copy(CopyRing& ring, uint64_t dst, uint64_t src, int64_t bytes) {
    for (int64_t at = 0; at < bytes; at += kStageBytes) {
      const uint32_t n = uint32_t(bytes - at < int64_t(kStageBytes) ? bytes - at : int64_t(kStageBytes));
      load(ring.acquire(), src + uint64_t(at), n);
      ring.commit();
      store(dst + uint64_t(at), ring.consume(), n);
      ring.release();
    }
  }

  // A token's topk_idx row for the scalar, in one of two UB slots: get(t, next) waits for row t (loaded by the
  // previous get, or now) and starts loading row `next` (none: -1) into the other slot.
  class TopkRows {
    using E = AscendC::HardEvent;

   public:
    __aicore__ inline TopkRows(VecCtx<Arch>& ctx, const Tile& ub, uint64_t gm, uint32_t row_bytes)
        : ctx_(ctx),
          ub_(ub),
          gm_(gm),
          row_bytes_(row_bytes),
          id_(ctx.pipe().template AllocEventID<E::MTE2_S>()),
          read_(ctx.pipe().template AllocEventID<E::S_MTE2>()) {}
    __aicore__ inline ~TopkRows() {
      ctx_.pipe().template ReleaseEventID<E::MTE2_S>(id_);
      ctx_.pipe().template ReleaseEventID<E::S_MTE2>(read_);
    }
    // A fetch waits for the scalar reads before it (S -> MTE2): the slot it overwrites was read two rows ago.
    __aicore__ inline AscendC::LocalTensor<int64_t> get(int64_t t, int64_t next) {
      if (t != loaded_) fetch(t);
      wait_event<E::MTE2_S>(id_);
      const AscendC::LocalTensor<int64_t> row = slot(which_);
      which_ ^= 1;
      loaded_ = next;
      if (next >= 0) fetch(next);
      return row;
    }

   private:
    __aicore__ inline AscendC::LocalTensor<int64_t> slot(int w) {
      return ctx_.template tensor<int64_t>(Tile{Pos::kUB, ub_.offset + uint32_t(w) * kSlotBytes, kSlotBytes});
    }
    __aicore__ inline void fetch(int64_t t) {  // into slot which_
      set_event<E::S_MTE2>(read_);
      wait_event<E::S_MTE2>(read_);
      AscendC::DataCopyPad(slot(which_), gm_at<int64_t>(gm_ + uint64_t(t) * row_bytes_),
                           AscendC::DataCopyExtParams(1, row_bytes_, 0, 0, 0),
                           AscendC::DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
      set_event<E::MTE2_S>(id_);
    }
    static constexpr uint32_t kSlotBytes = 256;  // num_topk <= 32 int64 ids (the buffer's limit)
    VecCtx<Arch>& ctx_;
    Tile ub_;
    uint64_t gm_;
    uint32_t row_bytes_;
    AscendC::TEventID id_, read_;
    int64_t loaded_ = -1;
    int which_ = 0;
  };

  __aicore__ inline void load(const Tile& t, uint64_t gm, uint32_t bytes) {
    const AscendC::DataCopyExtParams cp(1, bytes, 0, 0, 0);
    AscendC::DataCopyPad(ctx_.template tensor<uint8_t>(t), gm_at<uint8_t>(gm), cp,
                         AscendC::DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
  }
  __aicore__ inline void store(uint64_t gm, const Tile& t, uint32_t bytes) {
    const AscendC::DataCopyExtParams cp(1, bytes, 0, 0, 0);
    AscendC::DataCopyPad(gm_at<uint8_t>(gm), ctx_.template tensor<uint8_t>(t), cp);
  }

  VecCtx<Arch>& ctx_;
  const DgaMegaMoeParams& p_;
  Tile buf_, aux_;
};

// The kernel bodies of mega_moe.asc.
enum class MegaMoeStep { kDispatchBarrier, kRoute, kGather, kScatter, kCombineBarrier, kCombine };

template <MegaMoeStep S>
__aicore__ inline void run_mega_moe(const DgaMegaMoeParams& p) {
  VecCtx<arch::Ascend950> ctx;
  MegaMoeKernels<> k(ctx, p);
  if constexpr (S == MegaMoeStep::kDispatchBarrier) k.barrier(true);
  else if constexpr (S == MegaMoeStep::kCombineBarrier) k.barrier(false);
  else if constexpr (S == MegaMoeStep::kRoute) k.route();
  else if constexpr (S == MegaMoeStep::kGather) k.gather();
  else if constexpr (S == MegaMoeStep::kScatter) k.scatter();
  else k.combine();
}

}  // namespace deepgemm_ascend::tile::npu
