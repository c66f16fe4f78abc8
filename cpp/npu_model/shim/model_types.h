// The cube operand types of the model (npu_model::CubeType) for the AscendC element types; included
// after kernel_operator.h, before any kernel template is instantiated.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/npu_model/cube.hpp"

namespace dga_model {
using deepgemm_ascend::npu_model::CubeType;
template <> struct CubeTypeOf<bfloat16_t> { static constexpr int value = int(CubeType::kBF16); };
template <> struct CubeTypeOf<half> { static constexpr int value = int(CubeType::kFP16); };
template <> struct CubeTypeOf<float> { static constexpr int value = int(CubeType::kFP32); };
template <> struct CubeTypeOf<fp8_e4m3fn_t> { static constexpr int value = int(CubeType::kE4M3); };
template <> struct CubeTypeOf<fp8_e5m2_t> { static constexpr int value = int(CubeType::kE5M2); };
template <> struct CubeTypeOf<AscendC::mx_fp8_e4m3_t> { static constexpr int value = int(CubeType::kE4M3); };
template <> struct CubeTypeOf<AscendC::mx_fp8_e5m2_t> { static constexpr int value = int(CubeType::kE5M2); };
template <> struct CubeTypeOf<fp4x2_e2m1_t> { static constexpr int value = int(CubeType::kE2M1); };
template <> struct CubeTypeOf<int8_t> { static constexpr int value = int(CubeType::kS8); };
}  // namespace dga_model
