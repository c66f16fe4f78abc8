// The members of CPU-debug mode's bf16 class that the devkit leaves to its closed runtime, for programs
// npu_run.py builds: those see the class's namespace renamed (dga_run.h), so these are its definitions
// under that name (the model library's cpu_debug_runtime.cpp defines them under the devkit's own). Round to
// nearest even, NaN kept quiet, as the project's conversions.
#define bfloat16 dga_devkit_bfloat16
#include "kernel_bf16.h"
#undef bfloat16

#include "deepgemm_ascend/core/convert.hpp"

namespace dga_devkit_bfloat16 {
uint16_t Bf16T::FloatToBf16(const float& f) const { return deepgemm_ascend::core::float_to_bf16(f); }
float Bf16T::ToFloat() const { return deepgemm_ascend::core::bf16_to_float(val); }
Bf16T::operator float() const { return ToFloat(); }
Bf16T& Bf16T::operator=(const Bf16T& b) { val = b.val; return *this; }
Bf16T& Bf16T::operator=(const float& f) { val = FloatToBf16(f); return *this; }
}  // namespace dga_devkit_bfloat16
