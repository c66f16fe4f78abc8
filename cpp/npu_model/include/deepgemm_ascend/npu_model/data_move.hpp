// The NPU instruction model, data movement GM -> L1: the ND2NZ and DN2NZ DMAs of the Ascend
// 950 (dav-3510) as the devkit's CPU-debug headers issue them (impl/basic_api/dav_3510/
// kernel_operator_data_copy_impl.h: set_mte2_nz_para, then copy_gm_to_cbuf_multi_nd2nz / _dn2nz), with
// the semantics of the AscendC documentation ("GMToL1随路转换-ND2NZ搬运（DataCopy）", "...-DN2NZ..."),
// over host memory. This is our reading of the documentation, not Huawei's model.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

// MTE2_NZ_PARA: [15:0] matrix count (ndNum / dnNum), [31:16] loop2 dst stride (dstNzNStride), [47:32]
// loop3 dst stride (dstNzC0Stride), [63:48] loop4 dst stride (dstNzMatrixStride in 32 B units); dst
// strides count 32 B (C0) units.
struct Mte2NzPara {
  uint16_t count = 0, row_stride = 0, c0_stride = 0, matrix_stride = 0;
  static Mte2NzPara decode(uint64_t reg);
};

// The instruction's own operands: n rows (ND) or columns (DN) and d columns (ND) or rows (DN) per matrix,
// src strides in bytes (loop1: between source rows; loop4: between source matrices).
struct GmToL1Nz {
  uint16_t n = 0;
  uint32_t d = 0;
  uint64_t row_stride_bytes = 0, matrix_stride_bytes = 0;
  bool small_c0 = false;
};

// elem_bytes: 1 (8-bit types, and packed 4-bit moved as bytes), 2 or 4. The destination is the Nz layout
// of the n x d matrix: C0 = 32 B of d per row, rows `row_stride` C0 apart, C0 columns `c0_stride` C0
// apart; a partial last C0 column is zero-filled to 32 B. A count, n or d of 0 is a no-op.
// ND: element (r, c) at src + r * row_stride_bytes + c * elem_bytes.
void copy_gm_to_cbuf_nd2nz(uint8_t* dst, const uint8_t* src, int elem_bytes, const GmToL1Nz& op, const Mte2NzPara& para,
                           Accesses* acc = nullptr);
// DN: element (r, c) of the n x d matrix at src + c * row_stride_bytes + r * elem_bytes (the source's
// rows are the d index, its columns the n index).
void copy_gm_to_cbuf_dn2nz(uint8_t* dst, const uint8_t* src, int elem_bytes, const GmToL1Nz& op, const Mte2NzPara& para,
                           Accesses* acc = nullptr);

// Bytes of one C0 (a fractal row) on dav-3510.
inline constexpr size_t kC0Bytes = 32;

}  // namespace deepgemm_ascend::npu_model
