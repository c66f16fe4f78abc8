// op::bfloat16 of CANN's opdev headers, as AscendC host programs use it: bfloat16 with conversions to and
// from float (round to nearest even), for running such a program on the instruction model (npu_run.py).
#pragma once

#include <cstdint>

#include "deepgemm_ascend/core/convert.hpp"

namespace op {
struct bfloat16 {
  uint16_t value = 0;
  bfloat16() = default;
  bfloat16(float f) : value(deepgemm_ascend::core::float_to_bf16(f)) {}  // NOLINT: implicit, as opdev's
  bfloat16(double d) : bfloat16(float(d)) {}                             // NOLINT
  bfloat16(int i) : bfloat16(float(i)) {}                                // NOLINT
  operator float() const { return deepgemm_ascend::core::bf16_to_float(value); }  // NOLINT
};
}  // namespace op
