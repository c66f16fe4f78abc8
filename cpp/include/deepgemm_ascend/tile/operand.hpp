// Element formats an operand can have in GM and L1. The host cube multiplies bf16, so narrower
// formats are widened exactly while loading L1 -> L0 (every e4m3, e5m2 and e2m1 value is a bf16 value).
#pragma once

#include <cstdint>

namespace deepgemm_ascend::tile {

enum class OperandFormat : uint8_t { kBF16, kE4M3, kE5M2, kE2M1 };

constexpr int operand_bits(OperandFormat f) {
  return f == OperandFormat::kBF16 ? 16 : f == OperandFormat::kE2M1 ? 4 : 8;
}

}  // namespace deepgemm_ascend::tile
