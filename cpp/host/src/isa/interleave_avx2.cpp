// K-pair interleave (L0B's order) of 16 x 16 bf16 values with AVX2: the 16 x 8 transpose of 32-bit pair words as
// two 8 x 8 transposes (rows 0-7 and 8-15), each three rounds of unpacks / lane permutes:
//   t: 32-bit unpacks of row pairs, u: 64-bit unpacks of t pairs (columns p and p + 4 of four rows),
//   out: the 128-bit halves of u from the two groups of four rows joined.
#include <immintrin.h>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kWords = 8;  // pair words per row = rows of one 8 x 8 block

// Rows n0 .. n0 + 7 (8 pair words each, `stride` values apart) -> out[p * 16 + n0 + i].
inline void transpose8(const uint16_t* f, int64_t stride, uint32_t* out) {
  __m256i r[kWords], t[kWords], u[kWords];
  for (int i = 0; i < kWords; ++i) r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f + i * stride));
  for (int i = 0; i < kWords; i += 2) {
    t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);      // rows i, i+1 x words 0, 1 | 4, 5
    t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);  // rows i, i+1 x words 2, 3 | 6, 7
  }
  for (int g = 0; g < kWords; g += 4)
    for (int h = 0; h < 2; ++h) {
      u[g + 2 * h] = _mm256_unpacklo_epi64(t[g + h], t[g + 2 + h]);      // rows g..g+3 x word 2h | 2h + 4
      u[g + 2 * h + 1] = _mm256_unpackhi_epi64(t[g + h], t[g + 2 + h]);  // rows g..g+3 x word 2h+1 | 2h + 5
    }
  for (int p = 0; p < kWords / 2; ++p) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p * kCubeBlock), _mm256_permute2x128_si256(u[p], u[p + 4], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (p + 4) * kCubeBlock),
                        _mm256_permute2x128_si256(u[p], u[p + 4], 0x31));
  }
}

}  // namespace

void interleave_k_pairs_avx2(const uint16_t* f, int64_t stride, uint32_t* out) {
  transpose8(f, stride, out);
  transpose8(f + kWords * stride, stride, out + kWords);
}

}  // namespace deepgemm_ascend::tile::host
