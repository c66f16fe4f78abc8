// Exact widening of 8-bit and packed 4-bit floating-point codes to bf16 (host), used by the L1 -> L0
// loads. Every e4m3, e5m2 and e2m1 value is a bf16 value, so nothing is rounded.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/tile/operand.hpp"

namespace deepgemm_ascend::tile::host {

inline constexpr int64_t kWidenRun = 16;  // values per row of one call

// For each of `rows` rows: 16 values starting at in + r * in_stride (bytes; for 4-bit the 16 values
// are 8 bytes, low nibble first) -> out + r * out_stride (bf16 elements).
void widen_rows(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                int64_t out_stride);

}  // namespace deepgemm_ascend::tile::host
