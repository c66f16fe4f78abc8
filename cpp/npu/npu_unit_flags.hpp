// L0C ordered by its unit flags (one per 512 B; Mmad / Fixpipe unitFlag) instead of events, for a GEMM
// whose tiles go from one L0C stage to GM (the NPU primitive layer, npu_target.hpp). Every Mmad keeps the
// flags (waits for each block it writes to be free); a tile's last Mmad changes them (marks its blocks
// written) and its Fixpipe changes them back as it reads each block, so that the Fixpipe drains the tile
// as the last Mmad completes it and the next tile's Mmads wait only for the blocks they overwrite.
// A tile of m rows with m % 16 in [1, 8] leaves the last 8-row half of each fractal unread by its Fixpipe
// (our reading: the page names 512 B blocks, not how a short Fixpipe drains them): such a tile keeps the
// flags throughout and is ordered by events (M -> FIX before its Fixpipe, FIX -> M before the next tile's
// first Mmad). NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/tile/ring_stage.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"

namespace deepgemm_ascend::tile::npu {

// The one L0C stage: the ring's interface without events.
template <int Parts = 1>
class UnitFlagRing {
 public:
  static constexpr int kStages = 1;

  template <class C>
  __aicore__ inline UnitFlagRing(C& ctx, const RingPart (&parts)[Parts], const char* /*name*/) {
    for (int p = 0; p < Parts; ++p) stage_.part[p] = ctx.alloc(parts[p].pos, parts[p].bytes);
  }
  UnitFlagRing(const UnitFlagRing&) = delete;
  UnitFlagRing& operator=(const UnitFlagRing&) = delete;

  __aicore__ inline decltype(auto) acquire() { return view(); }
  __aicore__ inline void commit() {}
  __aicore__ inline decltype(auto) consume() { return view(); }
  __aicore__ inline void release() {}

 private:
  __aicore__ inline decltype(auto) view() const {
    if constexpr (Parts == 1) return (stage_.part[0]);
    else return (stage_);
  }

  RingStage<Tile, Parts> stage_;
};

// The cube core's context with the events of the tiles the unit flags cannot order. With unit flags and a
// Fixpipe that converts Nz to ND the Mmads must produce N first (the UnitFlag page; CATLASS's 950 block
// mmads): set after the pipe's set-up, restored at the end.
template <class Arch>
class UnitFlagCtx : public Ctx<Arch> {
  using E = AscendC::HardEvent;

 public:
  __aicore__ inline UnitFlagCtx() {
    m_fix_ = this->pipe().template AllocEventID<E::M_FIX>();
    fix_m_ = this->pipe().template AllocEventID<E::FIX_M>();
    AscendC::SetMMRowMajor();
  }
  __aicore__ inline ~UnitFlagCtx() {
    if (pending_) wait_event<E::FIX_M>(fix_m_);
    AscendC::SetMMColumnMajor();
    this->pipe().template ReleaseEventID<E::M_FIX>(m_fix_);
    this->pipe().template ReleaseEventID<E::FIX_M>(fix_m_);
  }
  UnitFlagCtx(const UnitFlagCtx&) = delete;
  UnitFlagCtx& operator=(const UnitFlagCtx&) = delete;

  // Whether a Fixpipe of m rows reads every 512 B block the Mmads of its tile wrote.
  __aicore__ static inline bool drained(int64_t m) {
    constexpr int64_t kRows = int64_t(arch::CubeFormat::kFractalRows), kHalf = kRows / 2;
    return m % kRows == 0 || m % kRows > kHalf;
  }
  // The unitFlag of an Mmad of a tile of m rows (`first`, `last`: the tile's first and last Mmad); the first
  // waits for the events of an earlier tile's Fixpipe.
  __aicore__ inline uint8_t mmad_flag(int64_t m, bool first, bool last) {
    if (first && pending_) {
      wait_event<E::FIX_M>(fix_m_);
      pending_ = false;
    }
    return last && drained(m) ? kUnitChange : kUnitKeep;
  }
  // Before the Fixpipe of a tile of m rows: its unitFlag (or, for a tile the flags cannot order, the
  // M -> FIX event and no flag).
  __aicore__ inline uint8_t fixpipe_flag(int64_t m) {
    if (drained(m)) return kUnitChange;
    set_event<E::M_FIX>(m_fix_);
    wait_event<E::M_FIX>(m_fix_);
    return kUnitOff;
  }
  // After that Fixpipe: a tile the flags cannot order holds the next tile's Mmads with an event.
  __aicore__ inline void after_fixpipe(int64_t m) {
    if (drained(m)) return;
    set_event<E::FIX_M>(fix_m_);
    pending_ = true;
  }

 private:
  AscendC::TEventID m_fix_ = 0, fix_m_ = 0;
  bool pending_ = false;
};

}  // namespace deepgemm_ascend::tile::npu
