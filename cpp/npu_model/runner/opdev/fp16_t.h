// op::fp16_t of CANN's opdev headers, as AscendC host programs use it: an IEEE half with conversions to and
// from float (round to nearest even), for running such a program on the instruction model (npu_run.py).
#pragma once

#include <cstdint>

#include "deepgemm_ascend/core/convert.hpp"

namespace op {
struct fp16_t {
  uint16_t val = 0;
  fp16_t() = default;
  fp16_t(float f) : val(deepgemm_ascend::core::float_to_fp16(f)) {}  // NOLINT: implicit, as opdev's
  fp16_t(double d) : fp16_t(float(d)) {}                             // NOLINT
  fp16_t(int i) : fp16_t(float(i)) {}                                // NOLINT
  operator float() const { return deepgemm_ascend::core::fp16_to_float(val); }  // NOLINT
  float toFloat() const { return float(*this); }
};
}  // namespace op
