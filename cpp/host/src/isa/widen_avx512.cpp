// AVX-512 widening of 8-bit / packed 4-bit codes to bf16 (only this file is compiled with AVX-512 flags):
// a table lookup of each code's magnitude, 32 values (two rows of 16) per round. The tables are the
// scalar reference's own results (src/tile/widen.cpp) for every magnitude, read once, so the two paths
// agree bit for bit by construction; the sign bit moves to bf16's.
//   e4m3 / e5m2: 128 magnitudes = 4 registers of 32 bf16, two vpermt2w (64 entries each) and a blend
//                (CPUs with AVX512-VBMI take byte tables instead: widen_avx512vbmi.cpp);
//   e2m1: 8 magnitudes, one vpermw.
#include <immintrin.h>

#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/widen.hpp"
#include "unpack_nibbles.hpp"
#include "widen_avx512_body.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kLanes = 32;            // 16-bit lanes of a zmm
constexpr int kMagnitudes8 = 128;     // 7-bit magnitudes of e4m3 / e5m2
constexpr int kMagnitudes4 = 8;       // 3-bit magnitudes of e2m1
constexpr int kBf16SignBit = 15;

struct Table {
  __m512i part[4];  // magnitudes [32 i, 32 i + 32)
  int sign_shift;   // bits below the code's sign bit
};

Table make_table(OperandFormat fmt) {
  alignas(64) uint16_t values[kMagnitudes8] = {};
  const bool e2m1 = fmt == OperandFormat::kE2M1;
  const uint16_t* bf16 = widened_codes(fmt);
  for (int m = 0; m < (e2m1 ? kMagnitudes4 : kMagnitudes8); ++m) values[m] = bf16[m];
  Table t{};
  t.sign_shift = e2m1 ? 3 : 7;
  for (int i = 0; i < 4; ++i) t.part[i] = _mm512_load_si512(values + i * kLanes);
  return t;
}

const Table& table(OperandFormat fmt) {
  static const Table e4m3 = make_table(OperandFormat::kE4M3), e5m2 = make_table(OperandFormat::kE5M2),
                     e2m1 = make_table(OperandFormat::kE2M1);
  return fmt == OperandFormat::kE4M3 ? e4m3 : fmt == OperandFormat::kE5M2 ? e5m2 : e2m1;
}

// 32 codes in 16-bit lanes -> 32 bf16.
inline __m512i lookup(__m512i code, const Table& t) {
  const __m512i mag = _mm512_and_si512(code, _mm512_set1_epi16(int16_t((1 << t.sign_shift) - 1)));
  const __m512i low = _mm512_permutex2var_epi16(t.part[0], mag, t.part[1]);   // magnitudes 0 .. 63
  const __m512i high = _mm512_permutex2var_epi16(t.part[2], mag, t.part[3]);  // 64 .. 127 (same low 6 bits)
  const __mmask32 upper = _mm512_test_epi16_mask(mag, _mm512_set1_epi16(int16_t(kMagnitudes8 / 2)));
  const __m512i sign = _mm512_slli_epi16(_mm512_srli_epi16(code, t.sign_shift), kBf16SignBit);
  return _mm512_or_si512(_mm512_mask_blend_epi16(upper, low, high), sign);
}

// 16 codes of one row of nibbles (8 bytes, low nibble first) as 16-bit lanes of a ymm.
inline __m256i nibble_codes(const uint8_t* p) { return _mm256_cvtepu8_epi16(unpack_nibbles(p)); }

// The lookup of widen_avx512_body.hpp: 32 byte codes through the word tables.
struct WordLookup {
  const Table& t;
  __m512i operator()(__m256i codes) const { return lookup(_mm512_cvtepu8_epi16(codes), t); }
};

}  // namespace

void widen_rows_avx512(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                       int64_t out_stride) {
  static_assert(kWidenRun * 2 == kLanes, "two rows per zmm of 16-bit lanes");
  if (fmt == OperandFormat::kBF16) return;
  const Table& t = table(fmt);
  if (fmt != OperandFormat::kE2M1) return widen_rows8(WordLookup{t}, in, in_stride, rows, out, out_stride);
  int64_t r = 0;  // packed 4-bit codes: two rows of nibbles per round
  for (; r + 1 < rows; r += 2) {
    const __m512i codes = _mm512_inserti64x4(_mm512_castsi256_si512(nibble_codes(in + r * in_stride)),
                                             nibble_codes(in + (r + 1) * in_stride), 1);
    store_two_rows(out, out_stride, r, lookup(codes, t));
  }
  if (r < rows)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride),
                        _mm512_castsi512_si256(lookup(_mm512_castsi256_si512(nibble_codes(in + r * in_stride)), t)));
}

void widen_fold_avx512(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                       int64_t out_stride, const uint16_t* step, bool step_per_row) {
  widen_fold8(WordLookup{table(fmt)}, in, in_stride, rows, out, out_stride, step, step_per_row);
}

}  // namespace deepgemm_ascend::tile::host
