// AVX-512 SwiGLU core of Mega MoE's vector stage: act = silu(min(gate, c)) * clamp(up, -c, c) * weight for
// 16 columns per step (only this file gets AVX-512 flags). exp is a degree-6 polynomial on the reduced
// argument with scalef for 2^n (overflow to inf, underflow to 0 as IEEE), within 2 ulp of expf; NaN
// inputs propagate.
#include <immintrin.h>

#include "deepgemm_ascend/tile/micro_kernels.hpp"

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

}  // namespace

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
