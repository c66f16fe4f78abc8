// Host, unchecked runs: bf16 L0 tiles that the L1 -> L0 loads leave where they lie in L1 instead of copying them.
// A's L1 tile is Nz, so a K range of it is the Nz L0A tile the AVX and scalar micro-kernels read (one run); B's
// is K-pair panels (host/pair_panels.hpp), per 16 columns the L1 K range in L0B's order, so a K range of it is an
// L0B tile whose panels lie further apart (MmadArgs::b_panel). mmad reads a view where it lies. A view lasts
// until the ring stage of its tile is released or another load replaces it; before L1 under it changes, or when
// the table is full, it is copied into its tile, so every order of calls sees what a copy would have given.
// Checked runs always copy (their buffer and hazard checks see every byte move).
#pragma once

#include <cstddef>
#include <cstdint>

namespace deepgemm_ascend::tile::host {

struct L0View {
  std::byte* tile = nullptr;       // the L0 tile it stands for; null: a free slot
  const uint16_t* data = nullptr;  // its first run, in L1
  int64_t panel = 0;               // values from one run to the next in L1
  int64_t run = 0, panels = 0;     // values per run, runs

  void copy_into_tile() const;
};

class L0Views {
 public:
  static constexpr int kSlots = 8;  // an L0A and an L0B view for each L0 stage that may be pending, and spare

  void set(const L0View& v);                      // replaces the view of v.tile
  const L0View* find(const std::byte* tile) const;
  void drop(const std::byte* tile);               // the tile's stage is released, or the tile rewritten
  void before_write(const std::byte* begin, const std::byte* end);  // L1 [begin, end) is about to change
  void clear() {
    for (L0View& v : slots_) v = {};
  }

 private:
  L0View slots_[kSlots];
};

}  // namespace deepgemm_ascend::tile::host
