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
  to_nz(dst, eb, op, para, acc, true, [&](uint32_t m, uint32_t r, uint32_t c) {
    return src + m * op.matrix_stride_bytes + r * op.row_stride_bytes + size_t(c) * size_t(eb);
  });
}

void copy_gm_to_cbuf_dn2nz(uint8_t* dst, const uint8_t* src, int eb, const GmToL1Nz& op, const Mte2NzPara& para,
                           Accesses* acc) {
  to_nz(dst, eb, op, para, acc, false, [&](uint32_t m, uint32_t r, uint32_t c) {
    return src + m * op.matrix_stride_bytes + c * op.row_stride_bytes + size_t(r) * size_t(eb);
  });
}

}  // namespace deepgemm_ascend::npu_model
