// The pieces of a stage ring both targets share: the buffers a stage spans, and a stage's tiles.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/tile/pipe.hpp"

namespace deepgemm_ascend::tile {

// One buffer of a ring's stage: its position and the bytes of each stage in it.
struct RingPart {
  Pos pos;
  uint32_t bytes;
};

// A stage spanning several buffers: part[i] is its tile in the i-th one.
template <class Tile, int Parts>
struct RingStage {
  Tile part[Parts];
};

}  // namespace deepgemm_ascend::tile
