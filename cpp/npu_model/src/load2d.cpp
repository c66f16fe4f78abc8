#include "deepgemm_ascend/npu_model/load2d.hpp"

#include <cstdlib>
#include <cstring>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/data_move.hpp"

namespace deepgemm_ascend::npu_model {

namespace {

constexpr size_t kFractalRows = 16;

// LoadData（2D矩阵搬运V2）.md (LoadData_2D_V2.md), 约束说明 and the LoadData2DParamsV2 table: the L1 source 32 B
// aligned, the L0A / L0B destination 512 B aligned, mStep and kStep in [0, 255].
constexpr const char* kLoad2dPage = "LoadData_2D_V2.md";
constexpr StartRule kLoad2dSrc{"src", "L1", 32, kLoad2dPage};
constexpr StartRule kLoad2dDst{"dst", "L0A/L0B", 512, kLoad2dPage};
// LoadData_2D_MX.md: the scale source in L1 (32 B, 通用说明和约束.md's L1 rule, which the page refers to);
// the L0A_MX / L0B_MX destination is the L0A / L0B address / 16 of a 512 B aligned L0 address, so 32 B
// aligned; xStep and yStep in [0, 255].
constexpr const char* kLoadMxPage = "LoadData_2D_MX.md, 通用说明和约束.md";
constexpr StartRule kLoadMxSrc{"src", "L1", 32, kLoadMxPage};
constexpr StartRule kLoadMxDst{"mx_dst", "L0A_MX/L0B_MX", 32, kLoadMxPage};
constexpr uint16_t kMaxStep = 255;

void check_steps(uint16_t a, uint16_t b, const char* a_name, const char* b_name) {
  DGA_REQUIRE(a <= kMaxStep, kValue, a_name, a_name, " in [0, ", kMaxStep, "], got ", a);
  DGA_REQUIRE(b <= kMaxStep, kValue, b_name, b_name, " in [0, ", kMaxStep, "], got ", b);
}

// Value `i` (elem_bits wide, packed low nibble first for b4) of a buffer, and its store.
uint8_t get_nibble(const uint8_t* p, size_t i) { return uint8_t((p[i / 2] >> (4 * (i % 2))) & 0xF); }
void set_nibble(uint8_t* p, size_t i, uint8_t v) {
  p[i / 2] = uint8_t((p[i / 2] & ~(0xF << (4 * (i % 2)))) | (v << (4 * (i % 2))));
}

void load_transposed(uint8_t* dst, const uint8_t* src, const Load2d& op, size_t src_stride, Accesses* acc) {
  const int bits = op.elem_bits;
  DGA_REQUIRE(bits == 4 || bits == 8 || bits == 16 || bits == 32, kValue, "elem_bits",
              "a transposing LoadData 2D moves b4, b8, b16 or b32 values, got ", bits, " bits");
  DGA_REQUIRE(!(bits == 4 && op.m_step % 4 != 0) && !(bits == 8 && op.m_step % 2 != 0), kValue, "mStep",
              "a transposing LoadData 2D of b", bits, " values needs mStep a multiple of ", bits == 4 ? 4 : 2,
              ", got ", op.m_step);
  DGA_REQUIRE(!(bits == 32 && op.k_step % 2 != 0), kValue, "kStep",
              "a transposing LoadData 2D of b32 values needs an even kStep, got ", op.k_step);
  const size_t c0 = kC0Bytes * 8 / size_t(bits), per_fractal = kFractalBytes * 8 / size_t(bits);
  const size_t bytes = size_t(bits) / 8;
  for (size_t ki = 0; ki < op.k_step; ++ki)
    for (size_t mi = 0; mi < op.m_step; ++mi) {
      const uint8_t* from = src + ((op.k_start + ki) * src_stride + op.m_start + mi) * kFractalBytes;
      note(acc, from, kFractalBytes, false);
      for (size_t r = 0; r < kFractalRows; ++r)
        for (size_t c = 0; c < c0; ++c) {
          const size_t row = mi * kFractalRows + r, col = ki * c0 + c;  // (R, C) of the moved region
          const size_t out = ((row / c0) * op.dst_stride + col / kFractalRows) * per_fractal +
                             (col % kFractalRows) * c0 + row % c0;
          const size_t in = r * c0 + c;
          if (bits == 4) set_nibble(dst, out, get_nibble(from, in));
          else std::memcpy(dst + out * bytes, from + in * bytes, bytes);
        }
    }
  // The destination fractals written: rows C < k_step * c0 (16 per fractal), columns R < m_step * 16.
  const size_t out_row_groups = op.k_step * c0 / kFractalRows, out_col_groups = op.m_step * kFractalRows / c0;
  for (size_t cg = 0; cg < out_col_groups; ++cg)
    note(acc, dst + cg * op.dst_stride * kFractalBytes, out_row_groups * kFractalBytes, true);
}

}  // namespace

void load_cbuf_to_l0(uint8_t* dst, const uint8_t* src, const Load2d& op, Accesses* acc) {
  check_steps(op.m_step, op.k_step, "mStep", "kStep");
  if (op.m_step == 0 || op.k_step == 0) return;  // a no-op (the page)
  note_start(acc, src, kLoad2dSrc);
  note_start(acc, dst, kLoad2dDst);
  const size_t src_stride = size_t(std::abs(op.src_stride));
  if (op.transpose) return load_transposed(dst, src, op, src_stride, acc);
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
  check_steps(op.x_step, op.y_step, "xStep", "yStep");
  if (op.x_step == 0 || op.y_step == 0) return;  // a no-op (the page)
  note_start(acc, src, kLoadMxSrc);
  note_start(acc, dst, kLoadMxDst);
  for (size_t x = 0; x < op.x_step; ++x) {
    uint8_t* to = dst + x * op.dst_stride * kMxUnitBytes;
    const uint8_t* from = src + ((op.x_start + x) * op.src_stride + op.y_start) * kMxUnitBytes;
    for (size_t y = 0; y < op.y_step; ++y) std::memcpy(to + y * kMxUnitBytes, from + y * kMxUnitBytes, kMxUnitBytes);
    note(acc, from, op.y_step * kMxUnitBytes, false);
    note(acc, to, op.y_step * kMxUnitBytes, true);
  }
}

}  // namespace deepgemm_ascend::npu_model
