// The NPU instruction model, L0C -> GM / UB: Fixpipe with NZ2ND as the devkit's CPU-debug
// headers issue it (impl/basic_api/dav_3510/kernel_operator_fixpipe_impl.h: copy_matrix_cc_to_gm /
// the UB form), with the semantics of "L0C到GM数据搬运（Fixpipe）" and "L0C到UB数据搬运（Fixpipe）" in the
// AscendC documentation. Our reading of the documentation.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

enum class FixQuant : uint8_t { kNone, kF322F16, kF322BF16 };  // NoQuant (fp32 out), casts with CAST_RINT

// Units (the documentation): src_stride counts C0_Size (16 fp32) between the N-adjacent Z columns of the
// Nz source (align16(m)); with NZ2ND dst_stride counts elements per destination row; src_nd_stride counts
// 16 x C0_Size between source matrices, dst_nd_stride elements between destination matrices.
// dual_split_m: rows [0, m / 2) go to dst[0] (sub-block 0), [m / 2, m) to dst[1] at the same offsets; m
// must be even. atomic_add: the fp32 destination is added to (SetAtomicAdd<float>). to_ub: the destination is
// a UB (L0C到UB数据搬运（Fixpipe）.md's rules), else GM. saturate: the casts' saturation mode (below).
struct Fixpipe {
  uint16_t n = 0, m = 0;
  uint16_t src_stride = 0;
  uint32_t dst_stride = 0;
  FixQuant quant = FixQuant::kNone;
  bool nz2nd = true;
  uint16_t nd_num = 1, src_nd_stride = 0;
  uint32_t dst_nd_stride = 0;
  bool dual_split_m = false;
  bool atomic_add = false;
  bool to_ub = false;
  bool saturate = true;
  // The L0C source holds int32 (mad_s8's C). The pages' 950 tables (数据类型) take an int32 source to int8_t,
  // uint8_t, half, bfloat16_t or int32_t; the model has int32 -> int32 with NoQuant (the values copied) only,
  // and refuses every quantPre with an int32 source (DEQF16, VDEQF16, REQ8, VREQ8, QS322BF16_PRE, ...) and
  // atomic add on an int32 output by name.
  bool src_s32 = false;
};

// The saturation mode of the Fixpipe's casts under a core's CTRL (L0C到GM数据搬运（Fixpipe）.md, 约束说明, Ascend
// 950: CTRL[48] = 0 saturates, inf -> +-MAX and NaN -> 0; 1 keeps inf / NaN; SetCtrlSpr(ISASI).md: CTRL[48]
// acts while CTRL[60] = 1, the reset value). With CTRL[60] = 0 the saturation is chosen per instruction, which
// the Fixpipe has no operand for: not documented, refused (kNotImplemented).
bool fixpipe_saturates(uint64_t ctrl);

// dst[1] is used with dual_split_m only. m, n or nd_num 0: a no-op. Refused (not modelled): NZ2NZ /
// NZ2DN, quantisation other than the casts, atomic add on a cast output, an odd m split by rows. Checked
// (the pages' FixpipeParamsArch3510 table and 约束说明): nSize at most 4095 (mSize's 65535: its 16-bit operand), srcStride at
// least align16(mSize) (the page: "其值应填成mSize对16向上取整"; a smaller one overlaps the Z columns), dstStride
// not 0, the L0C source 64 B aligned, a UB destination 32 B aligned with nSize * sizeof(out) a multiple of
// 32 B under NZ2ND (the UB page). nSize need not be a multiple of 16: the tables' "若不开启channelSplit功能，
// nSize必须为16的倍数" sits with channelSplit, an NZ-output (NZ2NZ) feature, while the NZ2ND page's
// pseudocode walks ceil(nSize / 16) blocks; CATLASS's 950 tiles (copy_l0c_to_gm.hpp) pass N tails with NZ2ND.
void fixpipe(uint8_t* const dst[2], const float* src, const Fixpipe& op, Accesses* acc = nullptr);

}  // namespace deepgemm_ascend::npu_model
