#include "deepgemm_ascend/layout/transform.hpp"

#include <algorithm>
#include <cstring>

#include "deepgemm_ascend/layout/sse2_transpose.hpp"

namespace deepgemm_ascend::layout {

namespace {

// Whole-byte values with a unit column stride: every C0 run is 32 contiguous bytes of a source row.
// Rows are taken in groups of kRowGroup: a group's runs land in consecutive destination rows of each
// C0 column block, which keeps both the reads and the writes streaming (one row at a time makes
// every column block a separate write stream, rows_pad * 32 bytes apart, several times slower).
constexpr int64_t kRowGroup = 8;
constexpr int64_t kCacheLine = 64;

// The run copies are the hot loop of GEMM packing: with 32-byte registers each C0 run is one load
// and one store, so an AVX2 clone is picked at load time where the CPU has it.
#if defined(__x86_64__) && defined(__GNUC__)
#define DGA_WIDE_COPY_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DGA_WIDE_COPY_CLONES
#endif

DGA_WIDE_COPY_CLONES void copy_runs(uint8_t* out, int64_t panel, const uint8_t* const* rows, int64_t nr,
                                    int64_t full) {
  for (int64_t j = 0; j < full; ++j) {
    uint8_t* o = out + j * panel;
    for (int64_t i = 0; i < nr; ++i) std::memcpy(o + i * kC0Bytes, rows[i] + j * kC0Bytes, kC0Bytes);
  }
}

template <class T>
void nd_to_nz_rows(const MatrixRef& src, T* dst, const NzGeometry& g) {
  auto* out = reinterpret_cast<uint8_t*>(dst);
  const int64_t row_bytes = src.cols * int64_t(sizeof(T));
  const int64_t full = row_bytes / kC0Bytes, tail = row_bytes % kC0Bytes;
  const int64_t panel = g.rows_pad * kC0Bytes;  // bytes of one C0 column block
  const int64_t blocks = g.cols_pad / g.c0();
  auto row = [&](int64_t r) { return reinterpret_cast<const uint8_t*>(src.at<const T>(r, 0)); };
  for (int64_t r0 = 0; r0 < src.rows; r0 += kRowGroup) {
    const int64_t nr = std::min(kRowGroup, src.rows - r0);
    const uint8_t* rows[kRowGroup];
    for (int64_t i = 0; i < nr; ++i) rows[i] = row(r0 + i);
    // Touch the next group's rows now: its lines arrive while this group is copied (this matters when
    // the source is not cache resident).
    for (int64_t i = r0 + kRowGroup; i < std::min(r0 + 2 * kRowGroup, src.rows); ++i)
      for (int64_t b = 0; b < row_bytes; b += kCacheLine) __builtin_prefetch(row(i) + b, 0, 3);
    copy_runs(out + r0 * kC0Bytes, panel, rows, nr, full);
    for (int64_t j = full; j < blocks; ++j) {
      uint8_t* o = out + j * panel + r0 * kC0Bytes;
      const int64_t n = j == full ? tail : 0;
      for (int64_t i = 0; i < nr; ++i) {
        if (n) std::memcpy(o + i * kC0Bytes, row(r0 + i) + j * kC0Bytes, size_t(n));
        std::memset(o + i * kC0Bytes + n, 0, size_t(kC0Bytes - n));
      }
    }
  }
  for (int64_t j = 0; j < blocks; ++j)
    std::memset(out + j * panel + src.rows * kC0Bytes, 0, size_t((g.rows_pad - src.rows) * kC0Bytes));
}

// Whole-byte values with a unit row stride (column-major source): walk each column contiguously.
template <class T>
void nd_to_nz_cols_scalar(const MatrixRef& src, T* dst, const NzGeometry& g, int64_t c_begin, int64_t r_begin) {
  const int64_t c0 = g.c0();
  for (int64_t c = c_begin; c < src.cols; ++c) {
    T* out = dst + (c / c0) * g.rows_pad * c0 + c % c0;
    const T* in = src.at<const T>(0, c);
    for (int64_t r = r_begin; r < src.rows; ++r) out[r * c0] = in[r];
  }
}

template <class T>
void nd_to_nz_cols(const MatrixRef& src, T* dst, const NzGeometry& g) {
  std::memset(dst, 0, g.bytes());
  nd_to_nz_cols_scalar(src, dst, g, 0, 0);
}

// 8 x 8 transpose of 16-bit values: out row j gets element j of each input.
#if defined(__SSE2__)
inline void transpose8x8_u16(const uint16_t* const* in, int64_t in_off, uint16_t* out, int64_t out_stride) {
  __m128i r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in[i] + in_off));
  detail::transpose_sse2(r);
  for (int j = 0; j < 8; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j * out_stride), r[j]);
}

// 16-bit column-major source: whole 16-column blocks go through 8 x 8 register transposes; column
// and row tails take the scalar path.
template <>
void nd_to_nz_cols<uint16_t>(const MatrixRef& src, uint16_t* dst, const NzGeometry& g) {
  constexpr int64_t kT = 8;
  const int64_t c0 = g.c0();
  std::memset(dst, 0, g.bytes());
  const int64_t full_cols = src.cols / c0 * c0, full_rows = src.rows / kT * kT;
  for (int64_t c = 0; c < full_cols; c += c0) {
    uint16_t* panel = dst + (c / c0) * g.rows_pad * c0;
    for (int64_t h = 0; h < c0; h += kT) {
      const uint16_t* cols[kT];
      for (int64_t i = 0; i < kT; ++i) cols[i] = src.at<const uint16_t>(0, c + h + i);
      for (int64_t r = 0; r < full_rows; r += kT) transpose8x8_u16(cols, r, panel + r * c0 + h, c0);
    }
  }
  // Row tail of the whole column blocks, then the column tail.
  nd_to_nz_cols_scalar(src.block(0, 0, src.rows, full_cols), dst, g, 0, full_rows);
  nd_to_nz_cols_scalar(src, dst, g, full_cols, 0);
}
#endif

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

// Packed 4-bit rows whose values start on byte boundaries are byte rows: C0 = 64 values = 32 bytes.
bool try_packed_4bit(const MatrixRef& src, void* dst, const NzGeometry& g) {
  if (g.bits != 4 || src.col_stride != 1 || src.origin % 2 || src.row_stride % 2 || src.cols % 2) return false;
  const MatrixRef bytes{.base = src.base, .origin = src.origin / 2, .rows = src.rows, .cols = src.cols / 2,
                        .row_stride = src.row_stride / 2, .col_stride = 1, .bits = 8};
  nd_to_nz_rows(bytes, static_cast<uint8_t*>(dst), NzGeometry{g.rows_pad, g.cols_pad / 2, 8});
  return true;
}

}  // namespace

void nd_to_nz(const MatrixRef& src, void* dst, const NzGeometry& g) {
  if (try_fast_path<uint16_t>(src, dst, g) || try_fast_path<uint8_t>(src, dst, g) ||
      try_fast_path<uint32_t>(src, dst, g) || try_packed_4bit(src, dst, g))
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
