// AVX-512F cube micro-kernel for CPUs with AVX-512 but without its BF16 dot product (Intel Skylake-SP to
// Ice Lake): fp32 FMAs on zmm. Only this file is compiled with -mavx512f.
//
// bf16 widens to fp32 exactly by a 16-bit shift. Per call, L0A is widened once into a thread-local fp32
// copy in the same Nz order, so a broadcast of one A value is a plain load. L0B stays as it is: one
// 64-byte K-pair row of a column block gives its 16 columns of the even K value (shift) and of the odd
// one (mask).
//
// Register tile: kRows rows x kNBlocks 16-column blocks = 24 zmm accumulators, two B vectors, one A
// broadcast and the mask (28 of the 32 zmm). Per K pair: 48 FMAs (24 cycles on two FMA units) against
// two shifts and two masks. Tiles of rows cross A's 16-row fractals freely (Nz rows of one K block, and
// L0C rows of one column block, are contiguous); m_pad % 12 is 0, 4 or 8, and those rows run as one tile.
// Each element sums its K products in K order with one FMA each, as the AVX2 kernel does: the two give
// the same bits.
#include <immintrin.h>

#include <vector>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int64_t B = kCubeBlock;
constexpr int64_t kPairs = B / kKPair;
constexpr int kRows = 12;
constexpr int kNBlocks = 2;
constexpr int kLanes = 16;                       // fp32 lanes of a zmm: one fractal row
constexpr int64_t kPairRowsPerFractal = B * B / (kLanes * kKPair);  // 64-byte K-pair rows per 16 x 16 fractal

// L0A widened to fp32 in the same Nz order: row m, K value k of K block kb at (kb * m_pad + m) * 16 + k % 16.
const float* widen_a(const MmadArgs& o) {
  thread_local std::vector<float> buf;
  buf.resize(size_t(o.m_pad * o.k_pad));
  const __m256i* in = reinterpret_cast<const __m256i*>(o.a);
  float* out = buf.data();
  for (int64_t i = 0; i < o.m_pad * o.k_pad / kLanes; ++i)
    _mm512_storeu_ps(out + i * kLanes,
                     _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(in + i)), 16)));
  return buf.data();
}

// acc += a * b, always in the accumulator's register (as in the AVX2 kernel: given the choice of
// vfmadd132/213/231, GCC moves the accumulators between registers from one K step to the next).
inline void fma_into(__m512& acc, __m512 a, __m512 b) { __asm__("vfmadd231ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b)); }

template <int kR, int kN>
inline void register_tile(const MmadArgs& o, const float* a, int64_t m0, int64_t nb) {
  const __m512i mask = _mm512_set1_epi32(int32_t(0xFFFF0000u));
  const bool scaled = o.row_scale != nullptr;
  // Unscaled accumulation continues from c, so every element sums its K products in K order however the
  // GEMM splits K into L0 steps.
  __m512 acc[kR][kN];
#pragma GCC unroll 4
  for (int j = 0; j < kN; ++j) {
    const float* cf = o.c + ((nb + j) * o.m_pad + m0) * B;
#pragma GCC unroll 12
    for (int r = 0; r < kR; ++r) acc[r][j] = o.init || scaled ? _mm512_setzero_ps() : _mm512_loadu_ps(cf + r * B);
  }
  const __m512i* bp = reinterpret_cast<const __m512i*>(o.b + nb * o.k_pad * B);
  const int64_t b_step = o.k_pad / B * kPairRowsPerFractal;  // between column blocks, in K-pair rows
  a += m0 * B;
  for (int64_t kb = 0; kb < o.k_pad / B; ++kb, a += o.m_pad * B, bp += kPairRowsPerFractal) {
#pragma GCC unroll 8
    for (int64_t p = 0; p < kPairs; ++p) {
      __m512 half[kN];
#pragma GCC unroll 4
      for (int j = 0; j < kN; ++j) half[j] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_loadu_si512(bp + j * b_step + p), 16));
#pragma GCC unroll 12
      for (int r = 0; r < kR; ++r) {
        const __m512 av = _mm512_set1_ps(a[r * B + kKPair * p]);
#pragma GCC unroll 4
        for (int j = 0; j < kN; ++j) fma_into(acc[r][j], av, half[j]);
      }
#pragma GCC unroll 4
      for (int j = 0; j < kN; ++j) half[j] = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(bp + j * b_step + p), mask));
#pragma GCC unroll 12
      for (int r = 0; r < kR; ++r) {
        const __m512 av = _mm512_set1_ps(a[r * B + kKPair * p + 1]);
#pragma GCC unroll 4
        for (int j = 0; j < kN; ++j) fma_into(acc[r][j], av, half[j]);
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kN; ++j) {
    float* cf = o.c + ((nb + j) * o.m_pad + m0) * B;
    if (!scaled) {
#pragma GCC unroll 12
      for (int r = 0; r < kR; ++r) _mm512_storeu_ps(cf + r * B, acc[r][j]);
      continue;
    }
    const __m512 col = _mm512_loadu_ps(o.col_scale + (nb + j) * B);
#pragma GCC unroll 12
    for (int r = 0; r < kR; ++r) {
      const __m512 s = _mm512_mul_ps(col, _mm512_set1_ps(o.row_scale[m0 + r]));
      _mm512_storeu_ps(cf + r * B, o.init ? _mm512_mul_ps(acc[r][j], s) : _mm512_fmadd_ps(acc[r][j], s, _mm512_loadu_ps(cf + r * B)));
    }
  }
}

// Every row of column blocks [nb, nb + kN): full tiles of kRows, then the 4 or 8 rows left as one tile.
// The blocks' B columns (k_pad x 16 kN bf16) stay in L1d across the sweep.
template <int kN>
void sweep_rows(const MmadArgs& o, const float* a, int64_t nb) {
  const int64_t tail = o.m_pad % kRows;
  for (int64_t m = 0; m < o.m_pad - tail; m += kRows) register_tile<kRows, kN>(o, a, m, nb);
  if (tail == 8) register_tile<8, kN>(o, a, o.m_pad - tail, nb);
  if (tail == 4) register_tile<4, kN>(o, a, o.m_pad - tail, nb);
}

}  // namespace

void mmad_bf16_avx512(const MmadArgs& o) {
  const float* a = widen_a(o);
  const int64_t n_blocks = o.n_pad / B;
  int64_t nb = 0;
  for (; nb + kNBlocks <= n_blocks; nb += kNBlocks) sweep_rows<kNBlocks>(o, a, nb);
  if (nb < n_blocks) sweep_rows<1>(o, a, nb);
}

// Calibration: 12 independent 16-lane FMA chains on registers (two FMA units x 4-cycle latency, and more).
double peak_loop_avx512(int64_t iters) {
  constexpr int kChains = 12;
  __m512 acc[kChains];
  // Every loop over the chains fully unrolled: otherwise the array stays in memory and each round stores it.
#pragma GCC unroll 12
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-3f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  __m512 s = acc[0];
#pragma GCC unroll 12
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  volatile float sink = _mm512_reduce_add_ps(s);
  (void)sink;
  return double(iters) * kChains * kLanes * 2;
}

}  // namespace deepgemm_ascend::tile::host
