// AVX-512 SwiGLU stage of Mega MoE's vector side (only this file gets AVX-512 flags):
//  * act = silu(min(gate, c)) * clamp(up, -c, c) * weight for 16 columns per step. exp is a degree-6
//    polynomial on the reduced argument with scalef for 2^n (overflow to inf, underflow to 0 as IEEE),
//    within 2 ulp of expf; NaN inputs propagate;
//  * the FP8 re-quantisation of a scale group: its amax and its E4M3 codes, core::float_to_e4m3's integer
//    rounding on 16 lanes (bit for bit).
#include <immintrin.h>

#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kLanes = 16, kInterleave = 8;

inline __m512 exp16(__m512 x) {
  // exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts for exactness).
  const __m512 lo = _mm512_set1_ps(-104.0f), hi = _mm512_set1_ps(89.0f);  // beyond: 0 and inf via scalef
  x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));                           // operand order keeps NaN
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  // Cephes expf coefficients.
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

inline __m512 bf16x16(const uint16_t* lo8, const uint16_t* hi8) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lo8));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi8));
  const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}

// Lanes [0, n) of a 16-lane step.
inline __mmask16 lanes(int64_t n) { return n >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

// core::float_to_e4m3 of 16 values (its constants, lane by lane).
inline __m128i e4m3x16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x), a = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
  const __m512i sign = _mm512_and_si512(_mm512_srli_epi32(u, 24), _mm512_set1_epi32(0x80));
  constexpr int kDrop = 23 - 3;  // fp32 -> 3 mantissa bits, ties to even
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(a, kDrop), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(a, _mm512_set1_epi32((1 << (kDrop - 1)) - 1)), odd);
  __m512i code = _mm512_sub_epi32(_mm512_srli_epi32(rounded, kDrop), _mm512_set1_epi32((127 - 7) << 3));
  // Below 2^-6: the nearest multiple of 2^-9, ties to even.
  const __m512 quanta = _mm512_mul_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(512.0f));
  const __m512i sub = _mm512_cvt_roundps_epi32(quanta, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  code = _mm512_mask_mov_epi32(code, _mm512_cmplt_epi32_mask(a, _mm512_set1_epi32(0x3C800000)), sub);
  code = _mm512_mask_mov_epi32(code, _mm512_cmpge_epi32_mask(a, _mm512_set1_epi32(0x43E00000)),  // >= 448
                               _mm512_set1_epi32(0x7E));
  code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(a, _mm512_set1_epi32(0x7F800000)),  // NaN
                               _mm512_set1_epi32(0x7F));
  return _mm512_cvtepi32_epi8(_mm512_or_si512(code, sign));
}

}  // namespace

float group_amax_avx512(const float* v, int64_t n) {
  __m512 m = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += kLanes)  // max_ps returns its second operand when the first is NaN
    m = _mm512_max_ps(_mm512_abs_ps(_mm512_maskz_loadu_ps(lanes(n - j), v + j)), m);
  alignas(64) float lane[kLanes];  // across the lanes (none holds NaN) in scalar code: GCC 12 warns
  _mm512_store_ps(lane, m);        // spuriously on the shuffles' undefined sources
  float amax = lane[0];
  for (int i = 1; i < kLanes; ++i) amax = lane[i] > amax ? lane[i] : amax;
  return amax;
}

void encode_e4m3_avx512(const float* v, int64_t n, float scale, uint8_t* out) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 k = lanes(n - j);
    _mm_mask_storeu_epi8(out + j, k, e4m3x16(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, v + j), s)));
  }
}

void silu_mul_avx512(const SiluMulArgs& s) {
  const __m512 c = _mm512_set1_ps(s.clamp), neg_c = _mm512_set1_ps(-s.clamp), w = _mm512_set1_ps(s.weight);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t j = s.j0; j < s.j0 + s.n; j += kLanes) {
    __m512 gate, up;
    if (s.interleaved) {  // columns [gate 8, up 8] per 8 outputs
      const uint16_t* g0 = s.h + (j / kInterleave) * 2 * kInterleave;
      const uint16_t* g1 = g0 + 2 * kInterleave;
      gate = bf16x16(g0, g1);
      up = bf16x16(g0 + kInterleave, g1 + kInterleave);
    } else {
      gate = bf16x16(s.h + j, s.h + j + kInterleave);
      up = bf16x16(s.h + s.inter + j, s.h + s.inter + j + kInterleave);
    }
    gate = _mm512_min_ps(c, gate);                       // NaN gate stays NaN
    up = _mm512_min_ps(c, _mm512_max_ps(neg_c, up));
    const __m512 silu = _mm512_div_ps(gate, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), gate))));
    _mm512_storeu_ps(s.act + (j - s.j0), _mm512_mul_ps(_mm512_mul_ps(silu, up), w));
  }
}

}  // namespace deepgemm_ascend::tile::host
