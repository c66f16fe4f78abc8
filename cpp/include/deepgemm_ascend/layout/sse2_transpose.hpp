// Register transposes for the layout copies (SSE2, every x86-64): N rows of N elements in N 128-bit
// registers (N = 16 bytes, or 8 16-bit values) become their transpose, row j holding element j of every
// input row. log2(N) rounds of the perfect shuffle t[2i] = unpacklo(r[i], r[i + N/2]),
// t[2i + 1] = unpackhi(r[i], r[i + N/2]): each round moves one bit of the column index into the row index.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>

namespace deepgemm_ascend::layout::detail {

template <int N>
inline void transpose_sse2(__m128i (&r)[N]) {
  static_assert(N == 8 || N == 16, "16 bytes or 8 16-bit values per register");
  constexpr int kHalf = N / 2;
  for (int round = 1; round < N; round *= 2) {
    __m128i t[N];
    for (int i = 0; i < kHalf; ++i) {
      if constexpr (N == 16) {
        t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + kHalf]);
        t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + kHalf]);
      } else {
        t[2 * i] = _mm_unpacklo_epi16(r[i], r[i + kHalf]);
        t[2 * i + 1] = _mm_unpackhi_epi16(r[i], r[i + kHalf]);
      }
    }
    for (int i = 0; i < N; ++i) r[i] = t[i];
  }
}

}  // namespace deepgemm_ascend::layout::detail
#endif
