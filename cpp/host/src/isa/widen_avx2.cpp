// AVX2 widening of 8-bit / packed 4-bit codes to bf16, one row of 16 values per round in 16-bit lanes.
// The values that are not plain rebiased normals come from host::widened_codes (the scalar reference's
// own results), by byte shuffles:
//   e2m1: all 16 codes: two 16-byte tables (the low and the high byte of each code's bf16);
//   e4m3 / e5m2: a 7-bit magnitude in [8, 0x78) is a normal of both formats, whose bf16 is the magnitude
//     shifted into bf16's exponent and mantissa fields plus the exponent rebias; the 8 lowest magnitudes
//     (zero, subnormals) and the 8 highest (the top normals, NaN, e5m2's infinities) are looked up in
//     two 8-entry tables of words; the sign bit moves to bf16's.
// widen_fold_avx2 (8-bit codes) adds power-of-two scales' exponent steps to the widened values in the same round
// (host/scale_fold.hpp).
#include <immintrin.h>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/widen.hpp"
#include "unpack_nibbles.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kTableWords = 8;              // words of one 16-byte shuffle table
constexpr int kMagnitudeMask = 0x7F;        // e4m3 / e5m2 magnitude bits
constexpr int kLowEnd = kTableWords;        // magnitudes [0, 8): the low table
constexpr int kHighBegin = kMagnitudeMask + 1 - kTableWords;  // [0x78, 0x80): the high table
constexpr int kSignBit = 0x80, kBf16SignShift = 8;
constexpr int kBf16ManBits = 7, kBf16Bias = 127;
constexpr int kE2m1Codes = 16;

inline __m256i broadcast_table(const uint8_t (&bytes)[16]) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)));
}

struct Table8 {
  __m256i low, high;  // words of magnitudes [0, 8) and [0x78, 0x80), in both 128-bit lanes
  __m256i rebias;     // (127 - bias) << 7
  int shift;          // 7 - mantissa bits: the magnitude's fields into bf16 position
};

struct TableE2m1 {
  __m128i lo, hi;  // low / high byte of each code's bf16
};

Table8 make_table8(OperandFormat fmt) {
  const uint16_t* bf16 = widened_codes(fmt);
  const core::MiniFloat& f = fmt == OperandFormat::kE4M3 ? core::kE4M3Format : core::kE5M2Format;
  const int man_bits = f.man_bits, bias = core::detail::bias(f);
  uint8_t low[16], high[16];
  for (int j = 0; j < kTableWords; ++j)
    for (int b = 0; b < 2; ++b) {
      low[2 * j + b] = uint8_t(bf16[j] >> (8 * b));
      high[2 * j + b] = uint8_t(bf16[kHighBegin + j] >> (8 * b));
    }
  return {broadcast_table(low), broadcast_table(high),
          _mm256_set1_epi16(int16_t((kBf16Bias - bias) << kBf16ManBits)), kBf16ManBits - man_bits};
}

TableE2m1 make_table_e2m1() {
  const uint16_t* bf16 = widened_codes(OperandFormat::kE2M1);
  alignas(16) uint8_t lo[kE2m1Codes], hi[kE2m1Codes];
  for (int c = 0; c < kE2m1Codes; ++c) {
    lo[c] = uint8_t(bf16[c]);
    hi[c] = uint8_t(bf16[c] >> 8);
  }
  return {_mm_load_si128(reinterpret_cast<const __m128i*>(lo)), _mm_load_si128(reinterpret_cast<const __m128i*>(hi))};
}

const Table8& table8(OperandFormat fmt) {
  static const Table8 e4m3 = make_table8(OperandFormat::kE4M3), e5m2 = make_table8(OperandFormat::kE5M2);
  return fmt == OperandFormat::kE4M3 ? e4m3 : e5m2;
}

// 16 8-bit codes in 16-bit lanes -> their bf16.
inline __m256i widen16(__m256i code, const Table8& t) {
  const __m256i mag = _mm256_and_si256(code, _mm256_set1_epi16(kMagnitudeMask));
  const __m256i normal = _mm256_add_epi16(_mm256_sll_epi16(mag, _mm_cvtsi32_si128(t.shift)), t.rebias);
  // Word j of a table is bytes 2j, 2j + 1: shuffle index (2j) | (2j + 1) << 8 for j = mag % 8.
  const __m256i j = _mm256_and_si256(mag, _mm256_set1_epi16(kTableWords - 1));
  const __m256i idx = _mm256_add_epi16(_mm256_mullo_epi16(j, _mm256_set1_epi16(0x0202)), _mm256_set1_epi16(0x0100));
  const __m256i low = _mm256_cmpgt_epi16(_mm256_set1_epi16(kLowEnd), mag);
  const __m256i high = _mm256_cmpgt_epi16(mag, _mm256_set1_epi16(kHighBegin - 1));
  __m256i v = _mm256_blendv_epi8(normal, _mm256_shuffle_epi8(t.low, idx), low);
  v = _mm256_blendv_epi8(v, _mm256_shuffle_epi8(t.high, idx), high);
  const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(code, _mm256_set1_epi16(kSignBit)), kBf16SignShift);
  return _mm256_or_si256(v, sign);
}

void widen_e2m1(const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out, int64_t out_stride) {
  static const TableE2m1 t = make_table_e2m1();
  for (int64_t r = 0; r < rows; ++r) {
    const __m128i codes = unpack_nibbles(in + r * in_stride);
    const __m128i lo = _mm_shuffle_epi8(t.lo, codes), hi = _mm_shuffle_epi8(t.hi, codes);
    auto* o = reinterpret_cast<__m128i*>(out + r * out_stride);
    _mm_storeu_si128(o, _mm_unpacklo_epi8(lo, hi));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi8(lo, hi));
  }
}

}  // namespace

void widen_rows_avx2(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                     int64_t out_stride) {
  static_assert(kWidenRun == 16, "one row of 16 values per ymm of 16-bit lanes");
  if (fmt == OperandFormat::kBF16) return;
  if (fmt == OperandFormat::kE2M1) return widen_e2m1(in, in_stride, rows, out, out_stride);
  const Table8& t = table8(fmt);
  for (int64_t r = 0; r < rows; ++r) {
    const __m256i code = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + r * in_stride)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride), widen16(code, t));
  }
}

namespace {

// v times 2^e per lane, step holding layout::fold_step's codes; zero, NaN and Inf unchanged.
inline __m256i add_exponent(__m256i v, __m256i step) {
  const __m256i all_ones = _mm256_set1_epi16(int16_t(layout::kBf16ExponentField));
  const __m256i field = _mm256_and_si256(v, all_ones);
  const __m256i special = _mm256_or_si256(_mm256_cmpeq_epi16(field, _mm256_setzero_si256()),
                                          _mm256_cmpeq_epi16(field, all_ones));
  return _mm256_add_epi16(v, _mm256_andnot_si256(special, step));
}

}  // namespace

void widen_fold_avx2(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                     int64_t out_stride, const uint16_t* step, bool step_per_row) {
  const Table8& t = table8(fmt);
  __m256i pair_steps[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};  // L0B: rows alternate the halves
  if (!step_per_row)
    for (int h = 0; h < 2; ++h)
      pair_steps[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(step + h * kWidenRun));
  for (int64_t r = 0; r < rows; ++r) {
    const __m256i code = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + r * in_stride)));
    const __m256i s = step_per_row ? _mm256_set1_epi16(int16_t(step[r])) : pair_steps[r % 2];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride), add_exponent(widen16(code, t), s));
  }
}

}  // namespace deepgemm_ascend::tile::host
