// Promotion of FP32 block scales across the cores of a group (the NPU primitive layer): the cube core
// sends each K block's fp32 product to the UBs of its two vector cores (Fixpipe, split by rows), which
// scale it and add it to their accumulators (kernel/gemm_promotion.hpp). Two UB slots take turns; the
// cube waits for a slot to be released before it overwrites it.
//   cube  -> vector  kReady[s]: slot s holds a product   (mode 2: both vector cores)
//   vector -> cube   kFree[s]:  slot s may be overwritten (mode 2: the cube waits for both)
// Every flag set is waited once before the kernel returns. NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "npu_ctx.hpp"
#include "npu_primitives.hpp"

namespace deepgemm_ascend::tile::npu {

constexpr int kPromotionSlots = 2;
constexpr uint16_t kPromotionReady[kPromotionSlots] = {0, 1};
constexpr uint16_t kPromotionFree[kPromotionSlots] = {2, 3};

// The UB of a vector core during a promoted GEMM with block_m x block_n tiles: two product slots, the
// fp32 accumulator and the bf16 output rows; each holds the vector core's half of the tile's rows, rows
// of a multiple of 16 values (32 B aligned in fp32 and in bf16). The same offsets on the cube (Fixpipe
// destination) and the vector cores.
struct PromotionUb {
  uint32_t rows = 0, row_values = 0;
  __aicore__ inline PromotionUb(int64_t block_m, int64_t block_n)
      : rows(uint32_t(arch::vector_split_rows(block_m))), row_values(align16(uint32_t(block_n))) {}
  __aicore__ inline uint32_t slot_bytes() const { return rows * row_values * uint32_t(sizeof(float)); }
  __aicore__ inline uint32_t slot(int s) const { return uint32_t(s) * slot_bytes(); }
  __aicore__ inline uint32_t acc() const { return kPromotionSlots * slot_bytes(); }
  __aicore__ inline uint32_t out() const { return acc() + slot_bytes(); }
  __aicore__ inline uint32_t bytes() const { return out() + slot_bytes() / 2; }
};

// The cube side: sends the product in L0C to the next slot.
template <class Arch>
class PromotionSender {
  using E = AscendC::HardEvent;

 public:
  __aicore__ inline PromotionSender(AscendC::TPipe& pipe, int64_t block_m, int64_t block_n)
      : pipe_(pipe), ub_(block_m, block_n) {
    m_fix_ = pipe_.template AllocEventID<E::M_FIX>();
    fix_m_ = pipe_.template AllocEventID<E::FIX_M>();
  }
  __aicore__ inline ~PromotionSender() {
    for (int s = 0; s < kPromotionSlots; ++s)
      if (used_[s]) cross_core_wait<PIPE_FIX>(kPromotionFree[s]);
    pipe_.template ReleaseEventID<E::M_FIX>(m_fix_);
    pipe_.template ReleaseEventID<E::FIX_M>(fix_m_);
  }
  PromotionSender(const PromotionSender&) = delete;
  PromotionSender& operator=(const PromotionSender&) = delete;

  // After the Mmad of a K block: L0C (m valid rows of m_pad) -> slot; with `reused` (one L0C stage: the next
  // Mmad writes the same L0C) the cube waits for the Fixpipe, otherwise the L0C ring orders the reuse.
  __aicore__ inline void send(const Local<float>& ub, const Local<float>& l0c, uint32_t m, uint32_t m_pad,
                              bool reused = true) {
    set_event<E::M_FIX>(m_fix_);
    wait_event<E::M_FIX>(m_fix_);
    if (used_[slot_]) cross_core_wait<PIPE_FIX>(kPromotionFree[slot_]);
    fixpipe_to_ub_split(ub[ub_.slot(slot_) / sizeof(float)], l0c, m, ub_.row_values, m_pad);
    cross_core_set<PIPE_FIX>(kPromotionReady[slot_]);
    used_[slot_] = true;
    slot_ = (slot_ + 1) % kPromotionSlots;
    if (reused) {
      set_event<E::FIX_M>(fix_m_);
      wait_event<E::FIX_M>(fix_m_);
    }
  }

 private:
  AscendC::TPipe& pipe_;
  PromotionUb ub_;
  AscendC::TEventID m_fix_ = 0, fix_m_ = 0;
  bool used_[kPromotionSlots] = {};
  int slot_ = 0;
};

// The vector side: receives the slots in the cube's order.
class PromotionReceiver {
 public:
  __aicore__ inline explicit PromotionReceiver(const PromotionUb& ub) : ub_(ub) {}
  // Waits for the next product; returns its UB offset.
  __aicore__ inline uint32_t receive() {
    cross_core_wait<PIPE_V>(kPromotionReady[slot_]);
    return ub_.slot(slot_);
  }
  // After the vector operations that read the product: the cube may overwrite its slot.
  __aicore__ inline void release() {
    cross_core_set<PIPE_V>(kPromotionFree[slot_]);
    slot_ = (slot_ + 1) % kPromotionSlots;
  }

 private:
  PromotionUb ub_;
  int slot_ = 0;
};

// The cube core's context of a promoted GEMM: the cube buffers, the vector cores' UB addresses and the
// sender.
template <class Arch>
class PromotedCtx : public Ctx<Arch, true> {
 public:
  __aicore__ inline PromotedCtx(int64_t block_m, int64_t block_n) : sender_(this->pipe(), block_m, block_n) {}
  __aicore__ inline PromotionSender<Arch>& sender() { return sender_; }

 private:
  PromotionSender<Arch> sender_;
};

}  // namespace deepgemm_ascend::tile::npu
