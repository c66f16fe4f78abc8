// The host target of Mega MoE's data moves (kernel/mega_moe_moves.hpp): the route's tables, the row copies
// and the combine's sums as plain loads and stores of host memory (the NPU's element work:
// cpp/npu/npu_mega_moe.hpp). The ring's scales are MN-major, the host cube's layout (the NPU's are K-major).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/block/swiglu.hpp"
#include "deepgemm_ascend/comm/peer_group.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/host/core.hpp"
#include "deepgemm_ascend/kernel/mega_moe_moves.hpp"

namespace deepgemm_ascend::tile::host {

// The byte of scale j of ring row `row` in the MN-major ring scales: byte j % 4 of int32 word (j / 4, row),
// sf_ring_rows words a row of words.
inline int64_t ring_scale_byte(int64_t row, int64_t j, int64_t sf_ring_rows) {
  constexpr int64_t kWord = block::kScalesPerWord;
  return ((j / kWord) * sf_ring_rows + row) * kWord + j % kWord;
}

// Values at a host address, read as the NPU reads a UB tensor.
template <class T>
struct HostValues {
  const T* at;
  T GetValue(uint32_t i) const { return at[i]; }
};

struct HostMegaMoeVector {
  // What every step has: this core and its parameters.
  class Step {
   public:
    Step(const Core& core, const DgaMegaMoeParams& p) : core_(core), p_(p) {}
    int64_t core() const { return core_.block_idx(); }
    int64_t cores() const { return core_.block_num(); }

   protected:
    const Core& core_;
    const DgaMegaMoeParams& p_;
  };

  // The route: counts in a vector of this core, the table, ends, recv_stats and status at p's addresses.
  class Route : public Step {
   public:
    Route(const Core& core, const DgaMegaMoeParams& p, const comm::PeerGroup& peers)
        : Step(core, p), peers_(peers), counts_(size_t(2 * p.experts_per_rank)) {}
    int64_t tokens_of(int64_t r) const { return peers_.header(int(r)).num_tokens; }
    int64_t topk_chunk() const { return p_.n > 0 ? p_.n : 1; }
    HostValues<int64_t> topk_ids(int64_t r, int64_t t0, int64_t) const {
      return {at_address<const int64_t>(p_.peers[r] + uint64_t(p_.topk_idx_off)) + t0 * p_.topk};
    }
    int32_t count(int64_t i) const { return counts_[size_t(i)]; }
    void set_count(int64_t i, int32_t v) { counts_[size_t(i)] = v; }
    void set_row(int64_t row, int32_t rank, int32_t token, int32_t slot) const {
      int32_t* f = at_address<int32_t>(p_.src) + row * kernel::kMegaRowFields;
      f[0] = rank, f[1] = token, f[2] = slot;
    }
    void set_end(int64_t e, int32_t end) const { at_address<int32_t>(p_.ends)[e] = end; }
    void add_received(int64_t e, int32_t n) const {
      if (p_.recv_stats != 0) at_address<int32_t>(p_.recv_stats)[e] += n;
    }
    // The first failure stays; the host raises it after the route (raise_mega_moe_route_status).
    void fail(int32_t code, int32_t a, int32_t b, int32_t c, int32_t d) const {
      int32_t* s = at_address<int32_t>(p_.status);
      if (s[0] != kDgaMegaMoeOk) return;
      s[0] = code, s[1] = a, s[2] = b, s[3] = c, s[4] = d;
    }
    void routed() const {}

   private:
    const comm::PeerGroup& peers_;
    std::vector<int32_t> counts_;
  };

  // The gather's and the scatter's copies; sf_ring_rows: the MN-major ring scales' stride, in int32 words.
  class Copies : public Step {
   public:
    Copies(const Core& core, const DgaMegaMoeParams& p, int64_t sf_ring_rows)
        : Step(core, p), sf_ring_rows_(sf_ring_rows) {}
    int64_t end(int64_t e) const { return at_address<const int32_t>(p_.ends)[e]; }
    kernel::MegaRow row(int64_t row) const {
      const int32_t* f = at_address<const int32_t>(p_.src) + row * kernel::kMegaRowFields;
      return {f[0], f[1], f[2]};
    }
    void copy(uint64_t dst, uint64_t src, int64_t bytes) const {
      std::memcpy(at_address<uint8_t>(dst), at_address<const uint8_t>(src), size_t(bytes));
    }
    void copy_scales(int64_t row, uint64_t src, int64_t bytes) const {
      const uint8_t* from = at_address<const uint8_t>(src);
      uint8_t* to = at_address<uint8_t>(p_.ring_sf);
      for (int64_t j = 0; j < bytes; ++j) to[ring_scale_byte(row, j, sf_ring_rows_)] = from[j];
    }

   private:
    int64_t sf_ring_rows_;
  };

  // The combine: fp32 sums of kValues columns in a buffer of this core.
  class Combine : public Step {
   public:
    static constexpr int64_t kValues = 256;
    using Step::Step;
    int64_t combine_values() const { return kValues; }
    HostValues<int64_t> topk_row(int64_t t, int64_t) const {
      return {at_address<const int64_t>(p_.peers[p_.rank] + uint64_t(p_.topk_idx_off)) + t * p_.topk};
    }
    void clear(uint32_t n) { std::fill(acc_, acc_ + n, 0.0f); }
    void add(uint64_t gm, uint32_t n) {
      const uint16_t* slot = at_address<const uint16_t>(gm);
      for (uint32_t c = 0; c < n; ++c) acc_[c] += core::bf16_to_float(slot[c]);
    }
    void store_sum(uint64_t gm, uint32_t n) const {
      uint16_t* y = at_address<uint16_t>(gm);
      for (uint32_t c = 0; c < n; ++c) y[c] = core::float_to_bf16(acc_[c]);
    }

   private:
    float acc_[kValues];
  };
};

}  // namespace deepgemm_ascend::tile::host
