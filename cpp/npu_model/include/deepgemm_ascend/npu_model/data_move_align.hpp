// The NPU instruction model, data movement GM -> L1 without layout conversion: copy_gm_to_cbuf_align_v2 of the
// Ascend 950 (dav-3510), which DataCopy(L1 tensor, GM tensor, DataCopyParams) issues
// (impl/basic_api/dav_3510/kernel_operator_data_copy_impl.h, CopyGmToCbufAlignV2), with the semantics of
// asc_copy_gm2l1_align.md. This is our reading of the documentation, not Huawei's model.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

// The instruction's operands: n_burst blocks of len_burst bytes, strides head to head in bytes (src in GM, dst
// in L1), left / right padding in elements, data_select the padding value choice.
//   len_burst is in bytes: the page's table says "unit of 32 bytes", but its own constraints (a multiple of 2
//   for 16-bit types, of 4 for 32-bit ones), the UB sibling (asc_copy_gm2ub_align_arch_3510.md: bytes) and
//   DataCopy's lowering (blockLen 32 B blocks passed as blockLen * 32) all count bytes.
struct GmToL1Align {
  uint32_t n_burst = 0;
  uint32_t len_burst = 0;
  uint8_t left_pad = 0, right_pad = 0;
  bool data_select = false;
  uint64_t src_stride = 0;
  uint32_t dst_stride = 0;
};

// For b < n_burst: len_burst bytes from src + b * src_stride to dst + b * dst_stride. The GM -> L1 loop
// registers (asc_set_gm2l1_loop*: set_loop*_outtol1) keep their reset value, one iteration: the stub does not
// provide their setters, so a kernel that sets them does not build. n_burst or len_burst 0: a no-op.
// data_select picks the padding value only (the page: false, the block's first element), so with no padding
// either value moves the same bytes; the page says only false is supported, while DataCopy's lowering passes
// true. Refused: padding (left / right counts: the padded row layout in L1 is not documented) and bursts that
// are not whole 32 B blocks (their L1 row tail) (kNotImplemented); L1 rows not 32 B apart or overlapping (the
// page: the destination must not overlap) (kValue).
// The L1 start's 32 B alignment is checked by the glue (its L1 offset).
void copy_gm_to_cbuf_align(uint8_t* dst, const uint8_t* src, const GmToL1Align& op, Accesses* acc = nullptr);

}  // namespace deepgemm_ascend::npu_model
