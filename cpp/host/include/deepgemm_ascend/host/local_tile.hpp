// A region of an on-chip buffer. Tiles owned by a StageRing carry its stage state, which the
// checked host primitives use to catch accesses by a pipe that does not own the stage.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deepgemm_ascend/tile/pipe.hpp"

namespace deepgemm_ascend::tile::host {

struct StageState {
  const char* ring = "";
  int index = 0;
  Pipe owner = Pipe::kNone;  // kNone: in flight between producer and consumer, or never acquired
};

struct LocalTile {
  std::byte* addr = nullptr;
  uint32_t bytes = 0;
  Pos pos = Pos::kL1;
  StageState* stage = nullptr;

  template <class T>
  T* as() const { return reinterpret_cast<T*>(addr); }
  // A sub-region; it shares the stage of its parent.
  LocalTile sub(uint32_t offset, uint32_t size) const { return {addr + offset, size, pos, stage}; }
};

}  // namespace deepgemm_ascend::tile::host
