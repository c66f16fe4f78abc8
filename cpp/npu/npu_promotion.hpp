// Promotion of FP32 block scales across the cores of a group (the NPU primitive layer): the cube core
// sends each K block's fp32 product to the UBs of its two vector cores (Fixpipe, split by rows), which
// scale it and add it to their accumulators (kernel/gemm_promotion.hpp). Two or four UB slots take turns;
// the cube waits for a slot to be released before it overwrites it. With a spare L0C product the cube's
// products take turns between two L0C tiles, so that the next K block's Mmad runs beside this one's Fixpipe.
//   cube  -> vector  kReady[s]: slot s holds a product   (mode 2: both vector cores)
//   vector -> cube   kFree[s]:  slot s may be overwritten (mode 2: the cube waits for both)
// Every flag set is waited once before the kernel returns. NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"

namespace deepgemm_ascend::tile::npu {

constexpr int kMaxPromotionSlots = 4;
constexpr uint16_t kPromotionReady[kMaxPromotionSlots] = {0, 1, 2, 3};
constexpr uint16_t kPromotionFree[kMaxPromotionSlots] = {4, 5, 6, 7};
// The promoted GEMM's slots: the vector cores take the products two K blocks at a time
// (kernel/gemm_promotion.hpp), while the cube fills the other two.
constexpr int kGemmPromotionSlots = 4;

// The UB of a vector core during a promoted GEMM with block_m x block_n tiles: `slots` product slots, the
// fp32 accumulator and the bf16 output rows (the MQA epilogue takes the slots alone, slots_bytes()); each
// holds the vector core's half of the tile's rows, rows of a multiple of 16 values (32 B aligned in fp32 and
// in bf16). The same slot offsets on the cube (Fixpipe destination) and the vector cores.
struct PromotionUb {
  uint32_t rows = 0, row_values = 0;
  int slots = 2;
  __aicore__ inline PromotionUb(int64_t block_m, int64_t block_n, int slots_ = 2)
      : rows(uint32_t(arch::vector_split_rows(block_m))), row_values(align16(uint32_t(block_n))), slots(slots_) {}
  __aicore__ inline uint32_t slot_bytes() const { return rows * row_values * uint32_t(sizeof(float)); }
  __aicore__ inline uint32_t slot(int s) const { return uint32_t(s) * slot_bytes(); }
  __aicore__ inline uint32_t slots_bytes() const { return slot(slots); }  // the slots alone (no acc, no out)
  __aicore__ inline uint32_t acc() const { return uint32_t(slots) * slot_bytes(); }
  __aicore__ inline uint32_t out() const { return acc() + slot_bytes(); }
  __aicore__ inline uint32_t bytes() const { return out() + slot_bytes() / 2; }
};

// The cube side: sends the product in L0C to the next slot. With a spare L0C tile (`spare`, of the
// tile's size) the products alternate between the caller's L0C tile and the spare (product()).
template <class Arch>
class PromotionSender {
  using E = AscendC::HardEvent;

 public:
  __aicore__ inline PromotionSender(AscendC::TPipe& pipe, int64_t block_m, int64_t block_n, int slots,
                                    const Local<float>& spare, bool with_spare)
      : pipe_(pipe), ub_(block_m, block_n, slots), spare_(spare), with_spare_(with_spare) {
    m_fix_ = pipe_.template AllocEventID<E::M_FIX>();
    for (int h = 0; h < kProducts; ++h) fix_m_[h] = pipe_.template AllocEventID<E::FIX_M>();
  }
  __aicore__ inline ~PromotionSender() {
    for (int s = 0; s < ub_.slots; ++s)
      if (used_[s]) cross_core_wait<PIPE_FIX>(kPromotionFree[s]);
    for (int h = 0; h < kProducts; ++h)
      if (pending_[h]) wait_event<E::FIX_M>(fix_m_[h]);
    pipe_.template ReleaseEventID<E::M_FIX>(m_fix_);
    for (int h = 0; h < kProducts; ++h) pipe_.template ReleaseEventID<E::FIX_M>(fix_m_[h]);
  }
  PromotionSender(const PromotionSender&) = delete;
  PromotionSender& operator=(const PromotionSender&) = delete;

  // The L0C tile the next product goes to: `tile` or, every other product with a spare, the spare; the
  // M pipe waits for the Fixpipe that last read it.
  __aicore__ inline Local<float> product(const Local<float>& tile) {
    if (!with_spare_) return tile;
    if (pending_[turn_]) wait_event<E::FIX_M>(fix_m_[turn_]);
    pending_[turn_] = false;
    claimed_ = true;
    return turn_ == 0 ? tile : spare_;
  }

  // After the Mmad of a K block: L0C (m valid rows of m_pad) -> slot. For a product() the next product() into
  // the same tile waits for this Fixpipe; otherwise with `reused` (one L0C stage: the next Mmad writes the
  // same L0C) the cube waits for it, and without, the caller's L0C ring orders the reuse.
  __aicore__ inline void send(const Local<float>& ub, const Local<float>& l0c, uint32_t m, uint32_t m_pad,
                              bool reused = true) {
    set_event<E::M_FIX>(m_fix_);
    wait_event<E::M_FIX>(m_fix_);
    if (used_[slot_]) cross_core_wait<PIPE_FIX>(kPromotionFree[slot_]);
    fixpipe_to_ub_split(ub[ub_.slot(slot_) / sizeof(float)], l0c, m, ub_.row_values, m_pad);
    cross_core_set<PIPE_FIX>(kPromotionReady[slot_]);
    used_[slot_] = true;
    slot_ = (slot_ + 1) % ub_.slots;
    if (claimed_) {
      set_event<E::FIX_M>(fix_m_[turn_]);
      pending_[turn_] = true;
      turn_ ^= 1;
      claimed_ = false;
    } else if (reused) {
      set_event<E::FIX_M>(fix_m_[0]);
      wait_event<E::FIX_M>(fix_m_[0]);
    }
  }

 private:
  static constexpr int kProducts = 2;
  AscendC::TPipe& pipe_;
  PromotionUb ub_;
  Local<float> spare_;
  bool with_spare_ = false, claimed_ = false;
  AscendC::TEventID m_fix_ = 0, fix_m_[kProducts] = {};
  bool used_[kMaxPromotionSlots] = {}, pending_[kProducts] = {};
  int slot_ = 0, turn_ = 0;
};

// The vector side: receives the slots in the cube's order.
class PromotionReceiver {
 public:
  __aicore__ inline explicit PromotionReceiver(const PromotionUb& ub) : ub_(ub) {}
  // Waits for the next product; returns its UB offset.
  __aicore__ inline uint32_t receive() {
    cross_core_wait<PIPE_V>(kPromotionReady[next_]);
    const uint32_t at = ub_.slot(next_);
    next_ = (next_ + 1) % ub_.slots;
    return at;
  }
  // After the vector operations that read the oldest received product: the cube may overwrite its slot.
  __aicore__ inline void release() {
    cross_core_set<PIPE_V>(kPromotionFree[oldest_]);
    oldest_ = (oldest_ + 1) % ub_.slots;
  }

 private:
  PromotionUb ub_;
  int next_ = 0, oldest_ = 0;
};

// The cube core's context of a promoted GEMM: the cube buffers, the vector cores' UB addresses and the
// sender.
template <class Arch>
class PromotedCtx : public Ctx<Arch, true> {
 public:
  // slots: the vector cores' product slots; spare_product: a second L0C tile for the products (the tile's
  // K blocks alternate between the L0C ring's tile and it).
  __aicore__ inline PromotedCtx(int64_t block_m, int64_t block_n, int slots = 2, bool spare_product = false)
      : sender_(this->pipe(), block_m, block_n, slots,
                this->template tensor<float>(spare_product ? this->alloc(Pos::kL0C, spare_bytes(block_m, block_n))
                                                           : Tile{Pos::kL0C, 0, 0}),
                spare_product) {}
  __aicore__ inline PromotionSender<Arch>& sender() { return sender_; }

 private:
  __aicore__ static inline uint32_t spare_bytes(int64_t block_m, int64_t block_n) {
    return uint32_t(L0CGeometry{block_m, block_n}.bytes());
  }
  PromotionSender<Arch> sender_;
};

}  // namespace deepgemm_ascend::tile::npu
