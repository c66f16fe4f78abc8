// The NPU instruction model, the cube's documented operand rules (cube_checks.cpp): Mmad's and MmadMx's m / k /
// n ranges (ValueError naming m, k or n) and L0 start addresses (noted for the access checker, hazards.hpp).
#pragma once

#include "deepgemm_ascend/npu_model/access.hpp"
#include "deepgemm_ascend/npu_model/cube.hpp"

namespace deepgemm_ascend::npu_model {

void check_mad_operands(const void* c, const uint8_t* a, const uint8_t* b, const Mad& op, Accesses* acc);
// fp4: two fp4 operands (else two fp8).
void check_mad_mx_operands(const float* c, const uint8_t* a, const uint8_t* b, bool fp4, const Mad& op,
                           Accesses* acc);

}  // namespace deepgemm_ascend::npu_model
