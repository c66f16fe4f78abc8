// AVX2/FMA cube micro-kernel (only this file is compiled with -mavx2 -mfma): fma_body.hpp on ymm.
//
// Register tile: 6 rows x one 16-column block (its two 8-lane halves) = 12 ymm accumulators, two B vectors,
// one A broadcast and the mask: the 16 ymm registers. Per K value: 12 FMAs (6 cycles on two FMA pipes) on
// 2 B vectors (one shift or mask each) and 6 broadcasts (loads). An 8-row tail tile would spill, so the
// rows left run as 4-row tiles (8 accumulators, still enough to cover the FMA latency).
#include <immintrin.h>

#include "fma_body.hpp"
#include "peak_chains.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

struct Avx2 {
  using Vec = __m256;
  static constexpr int kLanes = 8, kRows = 6, kVecs = 2, kMaxTailRows = 4;
  static Vec widen(const uint16_t* p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
  }
  static __m256i pairs(const uint16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Vec even(const uint16_t* p) { return _mm256_castsi256_ps(_mm256_slli_epi32(pairs(p), 16)); }
  static Vec odd(const uint16_t* p) { return _mm256_castsi256_ps(_mm256_and_si256(pairs(p), _mm256_set1_epi32(int32_t(0xFFFF0000u)))); }
  static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec zero() { return _mm256_setzero_ps(); }
};

// Calibration: 10 independent 8-lane FMA chains.
struct Avx2Peak {
  using Vec = __m256;
  static constexpr int kChains = 10;
  static constexpr double kFlopsPerStep = 8 * 2;
  static Vec init(int i) { return _mm256_set1_ps(float(i)); }
  static Vec step(Vec v) { return _mm256_fmadd_ps(v, _mm256_set1_ps(0.999f), _mm256_set1_ps(1e-3f)); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
};

}  // namespace

void mmad_bf16_avx2(const MmadArgs& o) { fma::run<Avx2>(o); }

double peak_loop_avx2(int64_t iters) { return peak_chains<Avx2Peak>(iters); }

}  // namespace deepgemm_ascend::tile::host
