#include "deepgemm_ascend/npu_model/load2d.hpp"

#include <cstdlib>
#include <cstring>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

void load_cbuf_to_l0(uint8_t* dst, const uint8_t* src, const Load2d& op, Accesses* acc) {
  DGA_REQUIRE(!op.transpose, kNotImplemented, "transpose", "the transposing LoadData 2D is not modelled");
  const size_t src_stride = size_t(std::abs(op.src_stride));
  for (size_t ki = 0; ki < op.k_step; ++ki) {
    uint8_t* to = dst + ki * op.dst_stride * kFractalBytes;
    const uint8_t* from = src + ((op.k_start + ki) * src_stride + op.m_start) * kFractalBytes;
    for (size_t mi = 0; mi < op.m_step; ++mi)
      std::memcpy(to + mi * kFractalBytes, from + mi * kFractalBytes, kFractalBytes);
    note(acc, from, op.m_step * kFractalBytes, false);
    note(acc, to, op.m_step * kFractalBytes, true);
  }
}

void load_mx_scales(uint8_t* dst, const uint8_t* src, const LoadMx& op, Accesses* acc) {
  for (size_t x = 0; x < op.x_step; ++x) {
    uint8_t* to = dst + x * op.dst_stride * kMxUnitBytes;
    const uint8_t* from = src + ((op.x_start + x) * op.src_stride + op.y_start) * kMxUnitBytes;
    for (size_t y = 0; y < op.y_step; ++y) std::memcpy(to + y * kMxUnitBytes, from + y * kMxUnitBytes, kMxUnitBytes);
    note(acc, from, op.y_step * kMxUnitBytes, false);
    note(acc, to, op.y_step * kMxUnitBytes, true);
  }
}

}  // namespace deepgemm_ascend::npu_model
