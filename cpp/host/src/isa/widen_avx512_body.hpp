// The AVX-512 widening loops of 8-bit codes (E4M3 / E5M2), written once against a lookup W whose
// operator()(__m256i) turns 32 codes (bytes, in order) into their 32 bf16 codes (in order): a table of words
// (widen_avx512.cpp, AVX-512BW) or of bytes (widen_avx512vbmi.cpp, AVX512-VBMI). In an anonymous namespace, as
// unpack_nibbles.hpp: each ISA's file compiles its own copy with its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "deepgemm_ascend/host/widen.hpp"

namespace deepgemm_ascend::tile::host {
namespace {

// Rows r and r + 1 (16 codes each) as 32 bytes.
inline __m256i two_rows(const uint8_t* in, int64_t in_stride, int64_t r) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + r * in_stride));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + (r + 1) * in_stride));
  return _mm256_set_m128i(hi, lo);
}

// Row r alone (its 16 codes, then zeros).
inline __m256i one_row(const uint8_t* in, int64_t in_stride, int64_t r) {
  return _mm256_set_m128i(_mm_setzero_si128(), _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + r * in_stride)));
}

inline void store_two_rows(uint16_t* out, int64_t out_stride, int64_t r, __m512i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride), _mm512_castsi512_si256(v));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (r + 1) * out_stride), _mm512_extracti64x4_epi64(v, 1));
}

// v times 2^e per lane, step holding layout::fold_step's codes; zero, NaN and Inf unchanged.
inline __m512i add_exponent(__m512i v, __m512i step) {
  const __m512i all_ones = _mm512_set1_epi16(int16_t(layout::kBf16ExponentField));
  const __m512i field = _mm512_and_si512(v, all_ones);
  const __mmask32 normal = _mm512_cmpneq_epi16_mask(field, _mm512_setzero_si512()) &
                           _mm512_cmpneq_epi16_mask(field, all_ones);
  return _mm512_mask_add_epi16(v, normal, v, step);
}

// widen_rows of 8-bit codes: two rows per round; one contiguous run (L0B's K-pair panels) as it lies.
template <class W>
void widen_rows8(const W& w, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out, int64_t out_stride) {
  static_assert(kWidenRun == 16, "two rows of codes per 32 lanes");
  int64_t r = 0;
  if (in_stride == kWidenRun && out_stride == kWidenRun)
    for (; r + 1 < rows; r += 2)
      _mm512_storeu_si512(out + r * kWidenRun, w(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + r * kWidenRun))));
  for (; r + 1 < rows; r += 2) store_two_rows(out, out_stride, r, w(two_rows(in, in_stride, r)));
  if (r < rows)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride), _mm512_castsi512_si256(w(one_row(in, in_stride, r))));
}

// widen_fold (micro_kernels.hpp) of 8-bit codes.
template <class W>
void widen_fold8(const W& w, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out, int64_t out_stride,
                 const uint16_t* step, bool step_per_row) {
  const __m512i pair_step = step_per_row ? _mm512_setzero_si512() : _mm512_loadu_si512(step);
  auto steps = [&](int64_t r) {
    return step_per_row ? _mm512_mask_blend_epi16(__mmask32(0xFFFF0000u), _mm512_set1_epi16(int16_t(step[r])),
                                                  _mm512_set1_epi16(int16_t(step[r + 1])))
                        : pair_step;
  };
  int64_t r = 0;
  for (; r + 1 < rows; r += 2) store_two_rows(out, out_stride, r, add_exponent(w(two_rows(in, in_stride, r)), steps(r)));
  if (r < rows) {  // an odd last row (an even index: its pair steps are lanes 0 .. 15)
    const __m512i s = step_per_row ? _mm512_set1_epi16(int16_t(step[r])) : pair_step;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride),
                        _mm512_castsi512_si256(add_exponent(w(one_row(in, in_stride, r)), s)));
  }
}

}  // namespace
}  // namespace deepgemm_ascend::tile::host
