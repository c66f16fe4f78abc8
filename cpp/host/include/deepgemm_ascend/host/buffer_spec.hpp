// Capacities and start-address alignments of a core's on-chip buffers, read from an Arch tag.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/tile/pipe.hpp"

namespace deepgemm_ascend::tile::host {

struct BufferSpec {
  const char* arch = "";
  uint32_t bytes[kNumPos] = {};
  uint32_t align[kNumPos] = {};
  int event_ids = 0;  // usable ids per (src, dst) event type

  template <class Arch>
  static constexpr BufferSpec of() {
    BufferSpec s;
    s.arch = Arch::kName;
    s.bytes[int(Pos::kL1)] = Arch::kL1Bytes;
    s.bytes[int(Pos::kL0A)] = Arch::kL0ABytes;
    s.bytes[int(Pos::kL0B)] = Arch::kL0BBytes;
    s.bytes[int(Pos::kL0C)] = Arch::kL0CBytes;
    s.bytes[int(Pos::kUB)] = Arch::kUBBytes;
    s.align[int(Pos::kL1)] = Arch::kL1Align;
    s.align[int(Pos::kL0A)] = Arch::kL0AAlign;
    s.align[int(Pos::kL0B)] = Arch::kL0BAlign;
    s.align[int(Pos::kL0C)] = Arch::kL0CAlign;
    s.align[int(Pos::kUB)] = Arch::kUBAlign;
    s.event_ids = Arch::kUserEventIds;
    return s;
  }
};

}  // namespace deepgemm_ascend::tile::host
