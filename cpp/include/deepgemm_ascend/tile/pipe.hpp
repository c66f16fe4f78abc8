// Pipes (instruction queues of an AI Core) and buffer positions.
#pragma once

#include <cstdint>

namespace deepgemm_ascend::tile {

enum class Pipe : uint8_t { kS, kV, kM, kMTE1, kMTE2, kMTE3, kFIX, kNone };
inline constexpr int kNumPipes = 7;

enum class Pos : uint8_t { kL1, kL0A, kL0B, kL0C, kUB };
inline constexpr int kNumPos = 5;

constexpr const char* name(Pipe p) {
  constexpr const char* names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "none"};
  return names[int(p)];
}
constexpr const char* name(Pos p) {
  constexpr const char* names[] = {"L1", "L0A", "L0B", "L0C", "UB"};
  return names[int(p)];
}

}  // namespace deepgemm_ascend::tile
