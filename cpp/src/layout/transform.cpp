#include "deepgemm_ascend/layout/transform.hpp"

#include <algorithm>
#include <cstring>

namespace deepgemm_ascend::layout {

namespace {

// Whole-byte values with a unit column stride: copy C0 runs row by row.
template <class T>
void nd_to_nz_rows(const MatrixRef& src, T* dst, const NzGeometry& g) {
  const int64_t c0 = g.c0();
  for (int64_t cb = 0; cb < g.cols_pad / c0; ++cb) {
    T* panel = dst + cb * g.rows_pad * c0;
    const int64_t c_begin = cb * c0;
    const int64_t n = std::clamp<int64_t>(src.cols - c_begin, 0, c0);
    for (int64_t r = 0; r < src.rows; ++r) {
      T* out = panel + r * c0;
      if (n > 0) std::memcpy(out, src.at<const T>(r, c_begin), n * sizeof(T));
      std::memset(out + n, 0, (c0 - n) * sizeof(T));
    }
    std::memset(panel + src.rows * c0, 0, (g.rows_pad - src.rows) * c0 * sizeof(T));
  }
}

// Whole-byte values with a unit row stride (column-major source): walk each column contiguously.
template <class T>
void nd_to_nz_cols(const MatrixRef& src, T* dst, const NzGeometry& g) {
  std::memset(dst, 0, g.bytes());
  const int64_t c0 = g.c0();
  for (int64_t c = 0; c < src.cols; ++c) {
    T* out = dst + (c / c0) * g.rows_pad * c0 + c % c0;
    const T* in = src.at<const T>(0, c);
    for (int64_t r = 0; r < src.rows; ++r) out[r * c0] = in[r];
  }
}

template <class T>
bool try_fast_path(const MatrixRef& src, void* dst, const NzGeometry& g) {
  if (g.bits != int(sizeof(T) * 8)) return false;
  if (src.col_stride == 1 || src.cols == 1) {
    nd_to_nz_rows(src, static_cast<T*>(dst), g);
    return true;
  }
  if (src.row_stride == 1 || src.rows == 1) {
    nd_to_nz_cols(src, static_cast<T*>(dst), g);
    return true;
  }
  return false;
}

}  // namespace

void nd_to_nz(const MatrixRef& src, void* dst, const NzGeometry& g) {
  if (try_fast_path<uint16_t>(src, dst, g) || try_fast_path<uint8_t>(src, dst, g) ||
      try_fast_path<uint32_t>(src, dst, g))
    return;
  std::memset(dst, 0, g.bytes());
  auto* bytes = static_cast<uint8_t*>(dst);
  for (int64_t r = 0; r < src.rows; ++r)
    for (int64_t c = 0; c < src.cols; ++c) detail::store_code(bytes, g.offset(r, c), g.bits, src.get(r, c));
}

void nz_to_nd(const void* src, const NzGeometry& g, const MutMatrixRef& dst) {
  const auto* bytes = static_cast<const uint8_t*>(src);
  if (g.bits >= 8 && dst.col_stride == 1) {
    const int64_t w = g.bits / 8, c0 = g.c0();
    for (int64_t r = 0; r < dst.rows; ++r)
      for (int64_t c = 0; c < dst.cols; c += c0) {
        const int64_t n = std::min(c0, dst.cols - c);
        std::memcpy(dst.at<uint8_t>(r, c), bytes + g.offset(r, c) * w, n * w);
      }
    return;
  }
  for (int64_t r = 0; r < dst.rows; ++r)
    for (int64_t c = 0; c < dst.cols; ++c) dst.set(r, c, detail::load_code(bytes, g.offset(r, c), g.bits));
}

}  // namespace deepgemm_ascend::layout
