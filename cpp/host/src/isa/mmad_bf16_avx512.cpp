// AVX-512F cube micro-kernel for CPUs with AVX-512 but without its BF16 dot product (Intel Skylake-SP to
// Ice Lake): fma_body.hpp on zmm. Only this file is compiled with -mavx512f.
//
// Register tile: 12 rows x two 16-column blocks = 24 zmm accumulators, two B vectors, one A broadcast and
// the mask (28 of the 32 zmm). Per K pair: 48 FMAs (24 cycles on two FMA units) against two shifts and two
// masks. m_pad % 12 is 0, 4 or 8, and those rows run as one tile; an odd last column block runs alone.
// It gives the AVX2 kernel's bits.
#include <immintrin.h>

#include "fma_body.hpp"
#include "peak_chains.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

struct Avx512 {
  using Vec = __m512;
  static constexpr int kLanes = 16, kRows = 12, kVecs = 2, kMaxTailRows = 8;
  static Vec widen(const uint16_t* p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
  }
  static __m512i pairs(const uint16_t* p) { return _mm512_loadu_si512(p); }
  static Vec even(const uint16_t* p) { return _mm512_castsi512_ps(_mm512_slli_epi32(pairs(p), 16)); }
  static Vec odd(const uint16_t* p) { return _mm512_castsi512_ps(_mm512_and_si512(pairs(p), _mm512_set1_epi32(int32_t(0xFFFF0000u)))); }
  static Vec broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static Vec zero() { return _mm512_setzero_ps(); }
};

// Calibration: 12 independent 16-lane FMA chains (two FMA units x 4-cycle latency, and more).
struct Avx512Peak {
  using Vec = __m512;
  static constexpr int kChains = 12;
  static constexpr double kFlopsPerStep = 16 * 2;
  static Vec init(int i) { return _mm512_set1_ps(float(i)); }
  static Vec step(Vec v) { return _mm512_fmadd_ps(v, _mm512_set1_ps(0.999f), _mm512_set1_ps(1e-3f)); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
};

}  // namespace

void mmad_bf16_avx512(const MmadArgs& o) { fma::run<Avx512>(o); }

double peak_loop_avx512(int64_t iters) { return peak_chains<Avx512Peak>(iters); }

}  // namespace deepgemm_ascend::tile::host
