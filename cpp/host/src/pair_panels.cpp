#include "deepgemm_ascend/host/pair_panels.hpp"

#include <algorithm>
#include <cstring>

#include "deepgemm_ascend/layout/sse2_transpose.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

using layout::MatrixRef;
using layout::NzGeometry;

namespace {

constexpr int64_t kPanelRows = kCubeBlock;    // rows of N per panel
constexpr int64_t kChunk = layout::kC0Bytes;  // bytes of a panel's rows transposed at a time
constexpr int64_t kChunkBytes = kPanelRows * kChunk;
constexpr int64_t kCacheLine = 64;

// One chunk: 16 rows of kChunk bytes (rows `stride` bytes apart) made of K pairs of `unit` bytes -> pair u
// of row n at out[u * 16 + n] (in units).
struct ChunkTranspose {
  int unit;                         // 4 (bf16), 2 (8-bit), 1 (packed 4-bit)
  host::InterleaveFn interleave;    // the ISA's 16 x 8 transpose of 32-bit pair words

  void operator()(const uint8_t* in, int64_t stride, uint8_t* out) const {
    if (unit == 4)
      return interleave(reinterpret_cast<const uint16_t*>(in), stride / 2, reinterpret_cast<uint32_t*>(out));
#if defined(__SSE2__)
    return unit == 2 ? transpose_u16(in, stride, out) : transpose_u8(in, stride, out);
#else
    for (int64_t n = 0; n < kPanelRows; ++n)
      for (int64_t u = 0; u < kChunk / unit; ++u)
        std::memcpy(out + (u * kPanelRows + n) * unit, in + n * stride + u * unit, size_t(unit));
#endif
  }

#if defined(__SSE2__)
  // 16 x 16 16-bit pairs as four 8 x 8 register transposes.
  static void transpose_u16(const uint8_t* in, int64_t stride, uint8_t* out) {
    constexpr int kT = 8;
    for (int h = 0; h < 2; ++h)      // pairs [8h, 8h + 8)
      for (int q = 0; q < 2; ++q) {  // rows [8q, 8q + 8)
        __m128i r[kT];
        for (int i = 0; i < kT; ++i)
          r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + (kT * q + i) * stride + h * 16));
        layout::detail::transpose_sse2(r);
        for (int j = 0; j < kT; ++j)
          _mm_storeu_si128(reinterpret_cast<__m128i*>(out + ((kT * h + j) * kPanelRows + kT * q) * 2), r[j]);
      }
  }
  // 16 x 32 byte pairs as two 16 x 16 register transposes.
  static void transpose_u8(const uint8_t* in, int64_t stride, uint8_t* out) {
    for (int h = 0; h < 2; ++h) {  // pairs [16h, 16h + 16)
      __m128i r[kPanelRows];
      for (int i = 0; i < kPanelRows; ++i)
        r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * stride + h * 16));
      layout::detail::transpose_sse2(r);
      for (int j = 0; j < kPanelRows; ++j)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (16 * h + j) * kPanelRows), r[j]);
    }
  }
#endif
};

// K-major rows of whole bytes (packed 4-bit: rows starting on bytes, an even width): each panel is
// transposed chunk by chunk straight from the source rows; chunks at the row or column tail go through a
// zeroed copy.
bool k_major(const MatrixRef& src, uint8_t* out, const NzGeometry& g) {
  if (g.bits != 16 && g.bits != 8 && g.bits != 4) return false;
  if (src.col_stride != 1 && src.cols != 1) return false;
  if (g.bits == 4 && (src.origin % 2 || src.row_stride % 2 || src.cols % 2)) return false;
  const ChunkTranspose chunk{g.bits / 4, host::interleave_k_pairs_fn()};
  const int64_t row_bytes = src.cols * g.bits / 8, stride = src.row_stride * g.bits / 8;
  const int64_t chunks = g.cols_pad * g.bits / 8 / kChunk;
  const auto* base = static_cast<const uint8_t*>(src.base) + src.origin * g.bits / 8;
  for (int64_t n0 = 0; n0 < g.rows_pad; n0 += kPanelRows) {
    const int64_t rows = std::clamp<int64_t>(src.rows - n0, 0, kPanelRows);
    const uint8_t* in = base + n0 * stride;
    uint8_t* panel = out + n0 * chunks * kChunk;
    const int64_t ahead = std::min(kPanelRows, src.rows - n0 - kPanelRows);
    for (int64_t j = 0; j < chunks; ++j) {
      // Touch the next panel's rows a cache line at a time as this panel's chunks are transposed.
      if (j * kChunk % kCacheLine == 0 && j * kChunk < row_bytes)
        for (int64_t i = 0; i < ahead; ++i) __builtin_prefetch(in + (kPanelRows + i) * stride + j * kChunk, 0, 3);
      const int64_t bytes = std::clamp<int64_t>(row_bytes - j * kChunk, 0, kChunk);
      uint8_t* o = panel + j * kChunkBytes;
      if (rows == kPanelRows && bytes == kChunk) {
        chunk(in + j * kChunk, stride, o);
      } else if (rows > 0 && bytes > 0) {
        uint8_t staged[kChunkBytes] = {};
        for (int64_t i = 0; i < rows; ++i) std::memcpy(staged + i * kChunk, in + i * stride + j * kChunk, size_t(bytes));
        chunk(staged, kChunk, o);
      } else {
        std::memset(o, 0, kChunkBytes);
      }
    }
  }
  return true;
}

// MN-major 16 / 8-bit values (columns of K contiguous over N): a pair row of a panel joins 16 values of
// two source columns.
template <class T, class Pair>
void mn_major_pairs(const MatrixRef& src, Pair* out, const NzGeometry& g) {
  constexpr int kBits = 8 * sizeof(T);
  const int64_t pairs = g.cols_pad / kKPair;
  for (int64_t n0 = 0; n0 < g.rows_pad; n0 += kPanelRows) {
    const int64_t rows = std::clamp<int64_t>(src.rows - n0, 0, kPanelRows);
    for (int64_t p = 0; p < pairs; ++p) {
      Pair* o = out + (n0 / kPanelRows * pairs + p) * kPanelRows;
      const int64_t k = kKPair * p;
      const T* even = k < src.cols && rows > 0 ? src.at<const T>(n0, k) : nullptr;
      const T* odd = k + 1 < src.cols && rows > 0 ? src.at<const T>(n0, k + 1) : nullptr;
      if (rows == kPanelRows && odd) {
        for (int64_t n = 0; n < kPanelRows; ++n) o[n] = Pair(even[n] | Pair(odd[n]) << kBits);
        continue;
      }
      for (int64_t n = 0; n < kPanelRows; ++n)
        o[n] = n < rows ? Pair((even ? Pair(even[n]) : 0) | (odd ? Pair(odd[n]) : 0) << kBits) : 0;
    }
  }
}

bool mn_major(const MatrixRef& src, uint8_t* out, const NzGeometry& g) {
  if (src.row_stride != 1 || (g.bits != 16 && g.bits != 8)) return false;
  if (g.bits == 16) mn_major_pairs<uint16_t>(src, reinterpret_cast<uint32_t*>(out), g);
  else mn_major_pairs<uint8_t>(src, reinterpret_cast<uint16_t*>(out), g);
  return true;
}

}  // namespace

void nd_to_pair_panels(const MatrixRef& src, void* dst, const NzGeometry& g) {
  auto* out = static_cast<uint8_t*>(dst);
  if (k_major(src, out, g) || mn_major(src, out, g)) return;
  std::memset(dst, 0, size_t(g.bytes()));
  const L0BGeometry panels = pair_panels(g);
  for (int64_t n = 0; n < src.rows; ++n)
    for (int64_t k = 0; k < src.cols; ++k) layout::detail::store_code(out, panels.offset(k, n), g.bits, src.get(n, k));
}

}  // namespace deepgemm_ascend::tile::host
