#include "deepgemm_ascend/npu_model/data_move.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

Mte2NzPara Mte2NzPara::decode(uint64_t reg) {
  return {uint16_t(reg & 0xFFFF), uint16_t((reg >> 16) & 0xFFFF), uint16_t((reg >> 32) & 0xFFFF),
          uint16_t((reg >> 48) & 0xFFFF)};
}

namespace {

// The documented limits (GMToL1随路转换-ND2NZ搬运（DataCopy）.md and GMToL1随路转换-DN2NZ搬运（DataCopy）.md,
// 约束说明 and the Nd2NzParams / Dn2NzParams ranges): the L1 destination 32 B aligned; ndNum / dnNum at most
// 4095, nValue at most 16384, dValue at most 65535 (ND) or 2^21 - 1 (DN); dstNzNStride and dstNzC0Stride in
// [1, 16384] (C0 units).
constexpr StartRule kNd2NzDst{"dst", "L1", 32, "GMToL1随路转换-ND2NZ搬运（DataCopy）.md"};
constexpr StartRule kDn2NzDst{"dst", "L1", 32, "GMToL1随路转换-DN2NZ搬运（DataCopy）.md"};
constexpr uint32_t kMaxMatrices = 4095, kMaxN = 16384, kMaxNdD = 65535, kMaxDnD = (1u << 21) - 1, kMaxDstStride = 16384;

void check_limits(const GmToL1Nz& op, const Mte2NzPara& p, bool dn) {
  DGA_REQUIRE(p.count <= kMaxMatrices, kValue, dn ? "dnNum" : "ndNum", "at most ", kMaxMatrices, " matrices, got ",
              p.count);
  DGA_REQUIRE(op.n <= kMaxN, kValue, "nValue", "nValue at most ", kMaxN, ", got ", op.n);
  const uint32_t max_d = dn ? kMaxDnD : kMaxNdD;
  DGA_REQUIRE(op.d <= max_d, kValue, "dValue", "dValue at most ", max_d, ", got ", op.d);
  if (p.count == 0 || op.n == 0 || op.d == 0) return;  // a no-op: the strides are not read
  DGA_REQUIRE(p.row_stride >= 1 && p.row_stride <= kMaxDstStride, kValue, "dstNzNStride",
              "dstNzNStride in [1, ", kMaxDstStride, "] C0 units, got ", p.row_stride);
  DGA_REQUIRE(p.c0_stride >= 1 && p.c0_stride <= kMaxDstStride, kValue, "dstNzC0Stride",
              "dstNzC0Stride in [1, ", kMaxDstStride, "] C0 units, got ", p.c0_stride);
}

// Moves every (r, c) of `count` matrices; `src_of` gives the source address of element (r, c); with
// `rows_contiguous` the elements of a row follow each other in GM (ND) and move 32 B at a time.
template <class SrcOf>
void to_nz(uint8_t* dst, int eb, const GmToL1Nz& op, const Mte2NzPara& p, Accesses* acc, bool rows_contiguous,
           SrcOf src_of) {
  DGA_REQUIRE(eb == 1 || eb == 2 || eb == 4, kValue, "elem_bytes", "the NZ DMA moves 1, 2 or 4 byte elements, got ", eb);
  DGA_REQUIRE(!op.small_c0, kNotImplemented, "small_c0", "the SmallC0 mode is not modelled");
  if (p.count == 0 || op.n == 0 || op.d == 0) return;
  const size_t c0 = kC0Bytes / size_t(eb), d_pad = (op.d + c0 - 1) / c0 * c0;
  for (uint32_t m = 0; m < p.count; ++m) {
    uint8_t* out = dst + size_t(m) * p.matrix_stride * kC0Bytes;
    for (uint32_t r = 0; r < op.n; ++r) {
      // The GM elements of row r: their span (a GM region holds all of them when it holds its two ends).
      const uint8_t* first = src_of(m, r, 0);
      const uint8_t* last = src_of(m, r, op.d - 1);
      if (last < first) std::swap(first, last);
      note_gm(acc, first, size_t(last - first) + size_t(eb), false);
      // One 32 B row of an Nz fractal per c0 values of the row, zero past d.
      for (size_t c = 0; c < d_pad; c += c0) {
        uint8_t* at = out + (c / c0) * p.c0_stride * kC0Bytes + size_t(r) * p.row_stride * kC0Bytes;
        const size_t valid = std::min(c0, size_t(op.d) - c);
        if (rows_contiguous) std::memcpy(at, src_of(m, r, uint32_t(c)), valid * size_t(eb));
        else
          for (size_t x = 0; x < valid; ++x) std::memcpy(at + x * size_t(eb), src_of(m, r, uint32_t(c + x)), size_t(eb));
        std::memset(at + valid * size_t(eb), 0, (c0 - valid) * size_t(eb));
        note(acc, at, kC0Bytes, true);
      }
    }
  }
}

}  // namespace

void copy_gm_to_cbuf_nd2nz(uint8_t* dst, const uint8_t* src, int eb, const GmToL1Nz& op, const Mte2NzPara& para,
                           Accesses* acc) {
  check_limits(op, para, false);
  note_start(acc, dst, kNd2NzDst);
  to_nz(dst, eb, op, para, acc, true, [&](uint32_t m, uint32_t r, uint32_t c) {
    return src + m * op.matrix_stride_bytes + r * op.row_stride_bytes + size_t(c) * size_t(eb);
  });
}

void copy_gm_to_cbuf_dn2nz(uint8_t* dst, const uint8_t* src, int eb, const GmToL1Nz& op, const Mte2NzPara& para,
                           Accesses* acc) {
  check_limits(op, para, true);
  note_start(acc, dst, kDn2NzDst);
  to_nz(dst, eb, op, para, acc, false, [&](uint32_t m, uint32_t r, uint32_t c) {
    return src + m * op.matrix_stride_bytes + c * op.row_stride_bytes + size_t(r) * size_t(eb);
  });
}

}  // namespace deepgemm_ascend::npu_model
