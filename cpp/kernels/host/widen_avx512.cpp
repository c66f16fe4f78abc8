// AVX-512 widening of 8-bit / packed 4-bit codes to bf16, 16 values per instruction sequence (only
// this file is compiled with AVX-512 flags). Same arithmetic as the scalar reference in
// src/tile/widen.cpp: normal codes move their exponent/mantissa into fp32 position and rebias with
// one multiplication, subnormal codes scale their mantissa integer; no fp32 subnormal is formed.
#include <immintrin.h>

#include "deepgemm_ascend/tile/micro_kernels.hpp"
#include "deepgemm_ascend/tile/widen.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

struct Format {
  int exp_bits, man_bits;
  bool ieee_specials, nan_all_ones;
  float rebias, subnormal_unit;
};

constexpr uint32_t kFp32Nan = 0x7FC00000u, kFp32Inf = 0x7F800000u;
constexpr int kFp32ManBits = 23, kBf16Shift = 16;

inline __m256i widen16(__m512i code, const Format& f) {
  const int width = f.exp_bits + f.man_bits;
  const __m512i mag = _mm512_and_si512(code, _mm512_set1_epi32((1 << width) - 1));
  const __m512i man = _mm512_and_si512(mag, _mm512_set1_epi32((1 << f.man_bits) - 1));
  const __m512 normal = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_slli_epi32(mag, kFp32ManBits - f.man_bits)),
                                      _mm512_set1_ps(f.rebias));
  const __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(man), _mm512_set1_ps(f.subnormal_unit));
  const __mmask16 is_normal = _mm512_cmpgt_epu32_mask(mag, man);  // exponent field != 0
  __m512i bits = _mm512_castps_si512(_mm512_mask_blend_ps(is_normal, sub, normal));
  if (f.ieee_specials) {
    const __mmask16 top = _mm512_cmpge_epu32_mask(mag, _mm512_set1_epi32(((1 << f.exp_bits) - 1) << f.man_bits));
    const __mmask16 nan = _mm512_mask_cmpneq_epu32_mask(top, man, _mm512_setzero_si512());
    bits = _mm512_mask_mov_epi32(bits, top, _mm512_set1_epi32(int(kFp32Inf)));
    bits = _mm512_mask_mov_epi32(bits, nan, _mm512_set1_epi32(int(kFp32Nan)));
  }
  if (f.nan_all_ones)
    bits = _mm512_mask_mov_epi32(bits, _mm512_cmpeq_epu32_mask(mag, _mm512_set1_epi32((1 << width) - 1)),
                                 _mm512_set1_epi32(int(kFp32Nan)));
  const __m512i sign = _mm512_slli_epi32(_mm512_srli_epi32(code, width), 31);
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_or_si512(bits, sign), kBf16Shift));
}

constexpr float pow2(int n) { return n == 0 ? 1.0f : n > 0 ? 2.0f * pow2(n - 1) : 0.5f * pow2(n + 1); }
constexpr Format kE4M3{4, 3, false, true, pow2(127 - 7), pow2(-9)};
constexpr Format kE5M2{5, 2, true, false, pow2(127 - 15), pow2(-16)};
constexpr Format kE2M1{2, 1, false, false, pow2(127 - 1), pow2(-1)};

// 8 bytes of packed nibbles -> 16 codes, low nibble first.
inline __m512i unpack_nibbles(const uint8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i lo = _mm_and_si128(bytes, _mm_set1_epi8(0x0F));
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0x0F));
  return _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi));
}

}  // namespace

void widen_rows_avx512(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                       int64_t out_stride) {
  static_assert(kWidenRun == 16, "one zmm of 32-bit lanes per run");
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* p = in + r * in_stride;
    __m256i v;
    switch (fmt) {
      case OperandFormat::kE4M3:
        v = widen16(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), kE4M3);
        break;
      case OperandFormat::kE5M2:
        v = widen16(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), kE5M2);
        break;
      case OperandFormat::kE2M1: v = widen16(unpack_nibbles(p), kE2M1); break;
      default: return;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride), v);
  }
}

}  // namespace deepgemm_ascend::tile::host
