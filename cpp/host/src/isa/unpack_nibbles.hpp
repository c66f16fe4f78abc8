// Packed 4-bit codes (low nibble first) of one widening row unpacked to bytes, shared by the AVX2 and AVX-512
// widening kernels. In an anonymous namespace: each ISA's file compiles its own copy with its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace deepgemm_ascend::tile::host {
namespace {

// 8 bytes of nibbles -> the row's 16 codes, one per byte.
inline __m128i unpack_nibbles(const uint8_t* p) {
  const __m128i packed = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));  // only the row's 8 bytes
  const __m128i lo = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
  return _mm_unpacklo_epi8(lo, hi);
}

}  // namespace
}  // namespace deepgemm_ascend::tile::host
