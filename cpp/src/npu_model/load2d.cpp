#include "deepgemm_ascend/npu_model/load2d.hpp"

#include <cstdlib>
#include <cstring>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

void load_cbuf_to_l0(uint8_t* dst, const uint8_t* src, const Load2d& op) {
  DGA_REQUIRE(!op.transpose, kNotImplemented, "transpose", "the transposing LoadData 2D is not modelled");
  const size_t src_stride = size_t(std::abs(op.src_stride));
  for (size_t ki = 0; ki < op.k_step; ++ki)
    for (size_t mi = 0; mi < op.m_step; ++mi)
      std::memcpy(dst + (ki * op.dst_stride + mi) * kFractalBytes,
                  src + ((op.k_start + ki) * src_stride + op.m_start + mi) * kFractalBytes, kFractalBytes);
}

void load_mx_scales(uint8_t* dst, const uint8_t* src, const LoadMx& op) {
  for (size_t x = 0; x < op.x_step; ++x)
    for (size_t y = 0; y < op.y_step; ++y)
      std::memcpy(dst + (x * op.dst_stride + y) * kMxUnitBytes,
                  src + ((op.x_start + x) * op.src_stride + op.y_start + y) * kMxUnitBytes, kMxUnitBytes);
}

}  // namespace deepgemm_ascend::npu_model
