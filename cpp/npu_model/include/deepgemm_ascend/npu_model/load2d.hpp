// The NPU instruction model, L1 -> L0A / L0B: LoadData 2D V2 as the devkit's CPU-debug headers
// issue it (impl/basic_api/dav_3510/kernel_operator_mm_impl.h: load_cbuf_to_ca / load_cbuf_to_cb(dst, src,
// mStartPosition, kStartPosition, mStep, kStep, srcStride, dstStride, transpose)), with the semantics of
// "LoadData（2D矩阵搬运V2）" in the AscendC documentation. Our reading of the documentation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

// Units (the documentation): start positions and steps count fractals of 16 rows along M and 32 B along K;
// the strides count 512 B between K-adjacent fractals of the source and of the destination.
struct Load2d {
  uint16_t m_start = 0, k_start = 0;
  uint16_t m_step = 0, k_step = 0;
  int32_t src_stride = 0;
  uint16_t dst_stride = 0;
  bool transpose = false;
  int elem_bits = 16;  // 4, 8, 16 or 32: the element type (read only when transposing)
};

inline constexpr size_t kFractalBytes = 512;

// Fractal (mi, ki) of the step, mi < m_step, ki < k_step: source fractal (k_start + ki) * |src_stride| +
// m_start + mi, destination fractal ki * dst_stride + mi (512 B each). m_step or k_step 0: a no-op.
// With transpose ("ifTranspose: transposes each fractal matrix"), the moved region - rows R (16 per M step),
// columns C (c0 = 32 B of elements per K step), fractals holding 16 rows x c0 values, row r at r * c0 - is
// written transposed: element (R, C) goes to row C, column R of the destination, whose fractal
// (C / 16, R / c0) is at (R / c0) * dst_stride + C / 16, element (C % 16) * c0 + R % c0. The square blocks
// the hardware transposes (16 x 16 values for b16 and b32, 32 x 32 for b8, 64 x 64 for b4) must be whole:
// the documented constraints m_step % 4 == 0 (b4), m_step % 2 == 0 (b8), k_step % 2 == 0 (b32).
void load_cbuf_to_l0(uint8_t* dst, const uint8_t* src, const Load2d& op, Accesses* acc = nullptr);

// The MX scale load that goes with an MX LoadData ("LoadData_2D_MX"; the devkit's load_cbuf_to_ca_mx /
// load_cbuf_to_cb_mx(mx_dst, src, xStartPosition, yStartPosition, xStep, yStep, srcStride, dstStride)):
// units of 32 B (16 rows x two K-adjacent UE8M0 scales); x counts 16-row blocks, y and both strides count
// units along K. Unit (x, y), x < x_step, y < y_step, moves from source unit (x_start + x) * src_stride +
// y_start + y to destination unit x * dst_stride + y.
struct LoadMx {
  uint16_t x_start = 0, y_start = 0;
  uint16_t x_step = 0, y_step = 0;
  uint16_t src_stride = 0, dst_stride = 0;
};
inline constexpr size_t kMxUnitBytes = 32;
void load_mx_scales(uint8_t* dst, const uint8_t* src, const LoadMx& op, Accesses* acc = nullptr);

}  // namespace deepgemm_ascend::npu_model
