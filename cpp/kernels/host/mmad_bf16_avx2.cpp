// AVX2/FMA cube micro-kernel (only this file is compiled with -mavx2 -mfma).
//
// bf16 widens to fp32 exactly by a 16-bit shift. Per call, L0A is widened once into a thread-local fp32
// copy in the same Nz order, so a broadcast of one A value is a plain load. L0B stays as it is: one
// 32-byte load of a K-pair row gives 8 columns of the even K value (shift) and of the odd one (mask).
//
// Register tile: kRows rows x 16 columns = 2 * kRows ymm accumulators (12), two B vectors, one A
// broadcast and the mask: the 16 ymm registers. Per K value: 12 FMAs (6 cycles on two FMA pipes) on
// 2 B vectors (one shift or mask each) and 6 broadcasts (loads). Tiles of rows cross A's 16-row fractals
// freely (Nz rows of one K block, and L0C rows of one column block, are contiguous); the rows that do not
// fill a 6-row tile run as 4-row tiles (8 accumulators, still enough to cover the FMA latency).
#include <immintrin.h>

#include <vector>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int64_t B = kCubeBlock;
constexpr int64_t kPairs = B / kKPair;
constexpr int kRows = 6;
constexpr int kTailRows = 4;  // rows of the last tiles when m_pad is not a multiple of kRows
constexpr int kLanes = 8;   // fp32 lanes of a ymm
constexpr int kHalves = 2;  // two 8-lane halves of a 16-column block

// L0A widened to fp32 in the same Nz order: row m, K value k of K block kb at (kb * m_pad + m) * 16 + k % 16.
const float* widen_a(const MmadArgs& o) {
  thread_local std::vector<float> buf;
  buf.resize(size_t(o.m_pad * o.k_pad));
  const __m128i* in = reinterpret_cast<const __m128i*>(o.a);
  float* out = buf.data();
  for (int64_t i = 0; i < o.m_pad * o.k_pad / kLanes; ++i)
    _mm256_storeu_ps(out + i * kLanes, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(in + i)), 16)));
  return buf.data();
}

// acc += a * b, always in the accumulator's register: given the choice (vfmadd132/213/231), GCC moves
// the 12 accumulators between registers from one K step to the next and spills them.
inline void fma_into(__m256& acc, __m256 a, __m256 b) { __asm__("vfmadd231ps %2, %1, %0" : "+x"(acc) : "x"(a), "x"(b)); }

template <int kR>
inline void register_tile(const MmadArgs& o, const float* a, int64_t m0, int64_t nb) {
  const __m256i mask = _mm256_set1_epi32(int32_t(0xFFFF0000u));
  const bool scaled = o.row_scale != nullptr;
  float* cf = o.c + (nb * o.m_pad + m0) * B;
  // Unscaled accumulation continues from c, so every element sums its K products in K order however
  // the GEMM splits K into L0 steps (results do not depend on the tiling, e.g. on the core count).
  __m256 acc[kR][kHalves];
#pragma GCC unroll 6
  for (int r = 0; r < kR; ++r)
    _Pragma("GCC unroll 2") for (int h = 0; h < kHalves; ++h)
      acc[r][h] = o.init || scaled ? _mm256_setzero_ps() : _mm256_loadu_ps(cf + r * B + h * kLanes);
  const __m256i* bp = reinterpret_cast<const __m256i*>(o.b + nb * o.k_pad * B);
  a += m0 * B;
  for (int64_t kb = 0; kb < o.k_pad / B; ++kb, a += o.m_pad * B) {
#pragma GCC unroll 8
    for (int64_t p = 0; p < kPairs; ++p, bp += kHalves) {
      const __m256 even[kHalves] = {_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_loadu_si256(bp), 16)),
                                    _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_loadu_si256(bp + 1), 16))};
#pragma GCC unroll 6
      for (int r = 0; r < kR; ++r) {
        const __m256 av = _mm256_broadcast_ss(a + r * B + kKPair * p);
        _Pragma("GCC unroll 2") for (int h = 0; h < kHalves; ++h) fma_into(acc[r][h], av, even[h]);
      }
      const __m256 odd[kHalves] = {_mm256_castsi256_ps(_mm256_and_si256(_mm256_loadu_si256(bp), mask)),
                                   _mm256_castsi256_ps(_mm256_and_si256(_mm256_loadu_si256(bp + 1), mask))};
#pragma GCC unroll 6
      for (int r = 0; r < kR; ++r) {
        const __m256 av = _mm256_broadcast_ss(a + r * B + kKPair * p + 1);
        _Pragma("GCC unroll 2") for (int h = 0; h < kHalves; ++h) fma_into(acc[r][h], av, odd[h]);
      }
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kR; ++r)
    _Pragma("GCC unroll 2") for (int h = 0; h < kHalves; ++h) {
      float* out = cf + r * B + h * kLanes;
      if (!scaled) {
        _mm256_storeu_ps(out, acc[r][h]);
        continue;
      }
      const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(o.col_scale + nb * B + h * kLanes), _mm256_set1_ps(o.row_scale[m0 + r]));
      _mm256_storeu_ps(out, o.init ? _mm256_mul_ps(acc[r][h], s) : _mm256_fmadd_ps(acc[r][h], s, _mm256_loadu_ps(out)));
    }
}

}  // namespace

void mmad_bf16_avx2(const MmadArgs& o) {
  const float* a = widen_a(o);
  // m_pad is a multiple of 16, so m_pad % 6 is 0, 2 or 4. A 2-row tail (4 accumulators) could not hide
  // the FMA latency: the last 8 rows run as two 4-row tiles instead (8 accumulators).
  const int64_t tail = o.m_pad % kRows == 2 ? 2 * kTailRows : o.m_pad % kRows;
  const int64_t full = (o.m_pad - tail) / kRows;
  // Each column block sweeps every row, so its B columns (k_pad x 16 bf16) stay in L1d.
  for (int64_t nb = 0; nb < o.n_pad / B; ++nb) {
    for (int64_t p = 0; p < full; ++p) register_tile<kRows>(o, a, p * kRows, nb);
    for (int64_t m = full * kRows; m < o.m_pad; m += kTailRows) register_tile<kTailRows>(o, a, m, nb);
  }
}

// Calibration: 10 independent 8-lane FMA chains on registers.
double peak_loop_avx2(int64_t iters) {
  constexpr int kChains = 10;
  __m256 acc[kChains];
  // Every loop over the chains fully unrolled: otherwise the array stays in memory and each round stores it.
#pragma GCC unroll 10
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(float(i));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 10
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]));
  }
  __m256 s = acc[0];
#pragma GCC unroll 10
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  volatile float sink = out[0];
  (void)sink;
  return double(iters) * kChains * 8 * 2;
}

}  // namespace deepgemm_ascend::tile::host
