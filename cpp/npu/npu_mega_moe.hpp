// Mega MoE on the NPU: the vector-core kernels around its GEMMs and SwiGLU stage (mega_moe.asc).
//   barrier   block 0: publishes this rank's token count (the dispatch barrier), writes the epoch into its
//             arrival slot in every rank's sync block (MTE3), then polls its own block's slots (MTE2) until
//             every rank arrived, or gives up after max_polls and records the late rank in status
//   route, gather, scatter, combine
//             kernel/mega_moe_moves.hpp (one source with the host) over this file's element work: the route's
//             counts in UB and its table in GM by the scalar unit (topk_idx read in chunks into UB); the
//             copies GM -> UB -> GM through rings of UB stages ordered by events, so that the loads of the
//             next rows are in flight while the earlier ones are stored (or summed)
// The barrier and the route (one core, a few steps) order their phases by PIPE_ALL barriers. The cross-rank
// order is the barriers' (and the stream's between launches). Part of the NPU primitive layer; NOT
// validated on hardware (nor the visibility of one rank's MTE writes to another's reads, which the 950's
// documentation leaves to HCCL).
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/kernel/mega_moe_moves.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

namespace mega {

constexpr uint32_t kArrivalsAt = 8;  // bytes into the sync block: the arrival epochs

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

// What every step has: its parameters, UB loads and stores of whole byte runs, a failure's record.
template <class Arch = arch::Ascend950>
class MegaMoeStep {
 public:
  __aicore__ inline MegaMoeStep(VecCtx<Arch>& ctx, const DgaMegaMoeParams& p) : ctx_(ctx), p_(p) {}
  __aicore__ inline int64_t core() const { return AscendC::GetBlockIdx(); }
  __aicore__ inline int64_t cores() const { return AscendC::GetBlockNum(); }
  // What went wrong, and its details (DgaMegaMoeStatus): the first failure stays.
  __aicore__ inline void fail(int32_t code, int32_t a, int32_t b, int32_t c, int32_t d) {
    auto s = gm_at<int32_t>(p_.status);
    if (s.GetValue(0) != kDgaMegaMoeOk) return;
    const int32_t words[] = {code, a, b, c, d};
    for (uint64_t i = 0; i < 5; ++i) s.SetValue(i, words[i]);
    AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::ENTIRE_DATA_CACHE>(s);
  }

 protected:
  static constexpr uint32_t kB16 = 2, kF32 = 4, kI32 = 4, kI64 = 8;
  static constexpr uint32_t kCopyBytes = Arch::kUBBytes / 4;  // the barrier's and the route's UB buffers

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
};

// The dispatch and combine barriers, on block 0.
template <class Arch = arch::Ascend950>
class MegaMoeBarrier : public MegaMoeStep<Arch> {
  using Base = MegaMoeStep<Arch>;
  using Base::kCopyBytes, Base::kI64, Base::ctx_, Base::p_, Base::load, Base::store;

 public:
  __aicore__ inline MegaMoeBarrier(VecCtx<Arch>& ctx, const DgaMegaMoeParams& p)
      : Base(ctx, p), buf_(ctx.alloc(Pos::kUB, kCopyBytes)), aux_(ctx.alloc(Pos::kUB, kCopyBytes)) {}

  __aicore__ inline void run(bool publish_tokens) {
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
      if (poll + 1 == p_.max_polls) this->fail(kDgaMegaMoePeerLate, int32_t(late), 0, 0, 0);
    }
  }

 private:
  Tile buf_, aux_;
};

// The route's element work (kernel::mega_route): the experts' counts, cursors and limits as int32 in UB, the
// ring table, ends and recv_stats written to GM by the scalar unit, each rank's topk_idx read in chunks.
template <class Arch = arch::Ascend950>
class NpuMegaRoute : public MegaMoeStep<Arch> {
  using Base = MegaMoeStep<Arch>;
  using Base::kCopyBytes, Base::kI64, Base::ctx_, Base::p_, Base::load;

 public:
  __aicore__ inline NpuMegaRoute(VecCtx<Arch>& ctx, const DgaMegaMoeParams& p)
      : Base(ctx, p), buf_(ctx.alloc(Pos::kUB, kCopyBytes)), aux_(ctx.alloc(Pos::kUB, kCopyBytes)) {}

  // The rank's token count, which its dispatch barrier published in its sync block.
  __aicore__ inline int64_t tokens_of(int64_t r) {
    barrier_all();
    load(aux_, p_.peers[r] + uint64_t(p_.sync_off), kI64);
    barrier_all();
    return ctx_.template tensor<int64_t>(aux_).GetValue(0);
  }
  __aicore__ inline int64_t topk_chunk() const { return kCopyBytes / kI64 / p_.topk; }
  __aicore__ inline AscendC::LocalTensor<int64_t> topk_ids(int64_t r, int64_t t0, int64_t n) {
    barrier_all();
    load(aux_, p_.peers[r] + uint64_t(p_.topk_idx_off + t0 * p_.topk * kI64), uint32_t(n * p_.topk) * kI64);
    barrier_all();
    return ctx_.template tensor<int64_t>(aux_);
  }
  __aicore__ inline int32_t count(int64_t i) { return ctx_.template tensor<int32_t>(buf_).GetValue(uint32_t(i)); }
  __aicore__ inline void set_count(int64_t i, int32_t v) {
    ctx_.template tensor<int32_t>(buf_).SetValue(uint32_t(i), v);
  }
  __aicore__ inline void set_row(int64_t row, int32_t rank, int32_t token, int32_t slot) {
    auto src = gm_at<int32_t>(p_.src);
    const uint64_t at = uint64_t(row * kernel::kMegaRowFields);
    src.SetValue(at, rank);
    src.SetValue(at + 1, token);
    src.SetValue(at + 2, slot);
  }
  __aicore__ inline void set_end(int64_t e, int32_t end) { gm_at<int32_t>(p_.ends).SetValue(uint64_t(e), end); }
  __aicore__ inline void add_received(int64_t e, int32_t n) {
    if (p_.recv_stats == 0) return;
    auto stats = gm_at<int32_t>(p_.recv_stats);
    stats.SetValue(uint64_t(e), stats.GetValue(uint64_t(e)) + n);
  }
  // The scalar writes reach GM before the launch ends.
  __aicore__ inline void routed() {
    AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::ENTIRE_DATA_CACHE>(gm_at<int32_t>(p_.src));
  }

 private:
  Tile buf_, aux_;
};

// The gather's and the scatter's element work: each row GM -> UB -> GM through kCopyStages stages of
// kStageBytes in flight (a row of 7168 bf16 values in one stage).
template <class Arch = arch::Ascend950>
class NpuMegaCopies : public MegaMoeStep<Arch> {
  using Base = MegaMoeStep<Arch>;
  using Base::ctx_, Base::p_, Base::load, Base::store;
  static constexpr int kCopyStages = 4;
  static constexpr uint32_t kStageBytes = 16 * 1024;
  using CopyRing = Ring<kCopyStages, Pipe::kMTE2, Pipe::kMTE3>;

 public:
  __aicore__ inline NpuMegaCopies(VecCtx<Arch>& ctx, const DgaMegaMoeParams& p, const char* what)
      : Base(ctx, p), ring_(ctx, {{Pos::kUB, kStageBytes}}, what) {}

  // Expert e's end in its wave's ring, as the route wrote it.
  __aicore__ inline int64_t end(int64_t e) const { return gm_at<int32_t>(p_.ends).GetValue(uint64_t(e)); }
  // Where ring row `row` of the table comes from, as the route wrote it.
  __aicore__ inline kernel::MegaRow row(int64_t row) const {
    auto src = gm_at<int32_t>(p_.src + uint64_t(row * kernel::kMegaRowFields) * Base::kI32);
    return {src.GetValue(0), src.GetValue(1), src.GetValue(2)};
  }
  __aicore__ inline void copy(uint64_t dst, uint64_t src, int64_t bytes) {
    for (int64_t at = 0; at < bytes; at += kStageBytes) {
      const uint32_t n = uint32_t(bytes - at < int64_t(kStageBytes) ? bytes - at : int64_t(kStageBytes));
      load(ring_.acquire(), src + uint64_t(at), n);
      ring_.commit();
      store(dst + uint64_t(at), ring_.consume(), n);
      ring_.release();
    }
  }
  // A ring row's scales: K-major rows of hidden / 32 bytes (the MX cube's layout).
  __aicore__ inline void copy_scales(int64_t row, uint64_t src, int64_t bytes) {
    copy(p_.ring_sf + uint64_t(row * bytes), src, bytes);
  }

 private:
  CopyRing ring_;
};

// The combine's element work: IEEE casts (an overflowing sum is inf, as on the host); the slots' chunks stream
// through a ring (MTE2 -> V) while the earlier ones are added; the next token's topk_idx row is loaded while
// this one is summed.
template <class Arch = arch::Ascend950>
class NpuMegaCombine : public MegaMoeStep<Arch> {
  using Base = MegaMoeStep<Arch>;
  using Base::kCopyBytes, Base::kB16, Base::kF32, Base::kI64, Base::ctx_, Base::p_, Base::load, Base::store;
  static constexpr int kStages = 4;
  // values of one combine step: the fp32 sums fill half of a kCopyBytes buffer; each slot's bf16 values a stage
  static constexpr uint32_t kValues = kCopyBytes / kF32 / 2 / vreg::kLanes<Arch> * vreg::kLanes<Arch>;

 public:
  __aicore__ inline NpuMegaCombine(VecCtx<Arch>& ctx, const DgaMegaMoeParams& p)
      : Base(ctx, p),
        acc_(ctx.alloc(Pos::kUB, kCopyBytes)),
        in_(ctx, {{Pos::kUB, kValues * kB16}}, "mega moe combine slots"),
        out_(ctx, {{Pos::kUB, kValues * kB16}}, "mega moe combine y"),
        rows_(ctx, ctx.alloc(Pos::kUB, kCopyBytes), p.peers[p.rank] + uint64_t(p.topk_idx_off),
              uint32_t(p.topk) * kI64) {}

  __aicore__ inline int64_t combine_values() const { return kValues; }
  __aicore__ inline AscendC::LocalTensor<int64_t> topk_row(int64_t t, int64_t next) { return rows_.get(t, next); }
  __aicore__ inline void clear(uint32_t n) { mega::zero<Arch>(ctx_.template ub<float>(acc_), n); }
  __aicore__ inline void add(uint64_t gm, uint32_t n) {
    load(in_.acquire(), gm, n * kB16);
    in_.commit();
    mega::add_bf16<Arch>(ctx_.template ub<float>(acc_), ctx_.template ub<bfloat16_t>(in_.consume()), n);
    in_.release();
  }
  __aicore__ inline void store_sum(uint64_t gm, uint32_t n) {
    const Tile y = out_.acquire();
    vreg::convert<Arch, bfloat16_t, float>(ctx_.template ub<bfloat16_t>(y), ctx_.template ub<float>(acc_), n);
    out_.commit();
    store(gm, out_.consume(), n * kB16);
    out_.release();
  }

 private:
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

  const IeeeCasts ieee_;
  Tile acc_;
  Ring<kStages, Pipe::kMTE2, Pipe::kV> in_;
  Ring<2, Pipe::kV, Pipe::kMTE3> out_;
  TopkRows rows_;
};

// The kernel bodies of mega_moe.asc.
enum class MegaMoeStepKind { kDispatchBarrier, kRoute, kGather, kScatter, kCombineBarrier, kCombine };

template <MegaMoeStepKind S>
__aicore__ inline void run_mega_moe(const DgaMegaMoeParams& p) {
  using Kind = MegaMoeStepKind;
  VecCtx<arch::Ascend950> ctx;
  if constexpr (S == Kind::kDispatchBarrier || S == Kind::kCombineBarrier) {
    MegaMoeBarrier<> b(ctx, p);
    b.run(S == Kind::kDispatchBarrier);
  } else if constexpr (S == Kind::kRoute) {
    NpuMegaRoute<> m(ctx, p);
    kernel::mega_route(m, p);
  } else if constexpr (S == Kind::kGather) {
    NpuMegaCopies<> m(ctx, p, "mega moe gather");
    kernel::mega_gather(m, p);
  } else if constexpr (S == Kind::kScatter) {
    NpuMegaCopies<> m(ctx, p, "mega moe scatter");
    kernel::mega_scatter(m, p);
  } else {
    NpuMegaCombine<> m(ctx, p);
    kernel::mega_combine(m, p);
  }
}

}  // namespace deepgemm_ascend::tile::npu
