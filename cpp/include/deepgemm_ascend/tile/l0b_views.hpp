// Host, unchecked runs: bf16 L0B tiles that load_l1_to_l0b leaves where they lie in L1 instead of copying them.
// B's L1 tile is K-pair panels (tile/pair_panels.hpp): per 16 columns, the L1 K range in L0B's order, so a K
// range of it is an L0B tile whose panels lie further apart, and mmad reads it there (MmadArgs::b_panel). A view
// lasts until the ring stage of its tile is released or another load replaces it; before L1 under it changes, or
// when the table is full, it is copied into its tile, so every order of calls sees what a copy would have given.
// Checked runs always copy (their buffer and hazard checks see every byte move).
#pragma once

#include <cstddef>
#include <cstdint>

namespace deepgemm_ascend::tile {

struct L0BView {
  std::byte* tile = nullptr;       // the L0B tile it stands for; null: a free slot
  const uint16_t* data = nullptr;  // its first panel, in L1
  int64_t panel = 0;               // values from one panel to the next in L1
  int64_t run = 0, panels = 0;     // values per panel, panels

  void copy_into_tile() const;
};

class L0BViews {
 public:
  static constexpr int kSlots = 4;  // L0 stages of every ring that may be pending at once, and spare

  void set(const L0BView& v);                      // replaces the view of v.tile
  const L0BView* find(const std::byte* tile) const;
  void drop(const std::byte* tile);                // the tile's stage is released: its content is dead
  void before_write(const std::byte* begin, const std::byte* end);  // L1 [begin, end) is about to change
  void clear() {
    for (L0BView& v : slots_) v = {};
  }

 private:
  L0BView slots_[kSlots];
};

}  // namespace deepgemm_ascend::tile
