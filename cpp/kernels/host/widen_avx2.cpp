// AVX2 widening of 8-bit / packed 4-bit codes to bf16: a gather from a table of every code's bf16 (the
// scalar reference's own results, host::widened_codes), so the two paths agree bit for bit by
// construction. 8 codes per gather, one row of 16 per round.
#include <immintrin.h>

#include "deepgemm_ascend/tile/micro_kernels.hpp"
#include "deepgemm_ascend/tile/widen.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kCodes = kWidenCodes;  // 8-bit codes; e2m1 uses the first 16
constexpr int kLanes = 8;    // 32-bit lanes of a ymm

struct Table {
  alignas(32) int32_t bf16[kCodes];  // one code's bf16 in the low half of each entry
};

Table make_table(OperandFormat fmt) {
  Table t{};
  const uint16_t* bf16 = widened_codes(fmt);
  for (int c = 0; c < kCodes; ++c) t.bf16[c] = bf16[c];
  return t;
}

const Table& table(OperandFormat fmt) {
  static const Table e4m3 = make_table(OperandFormat::kE4M3), e5m2 = make_table(OperandFormat::kE5M2),
                     e2m1 = make_table(OperandFormat::kE2M1);
  return fmt == OperandFormat::kE4M3 ? e4m3 : fmt == OperandFormat::kE5M2 ? e5m2 : e2m1;
}

// 16 codes of one row (16 bytes, or 8 bytes of nibbles, low first) as two ymm of 32-bit lanes.
inline void row_codes(const uint8_t* p, bool nibbles, __m256i (&codes)[2]) {
  __m128i bytes;
  if (nibbles) {  // read only the row's 8 bytes
    const __m128i packed = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    const __m128i lo = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
    bytes = _mm_unpacklo_epi8(lo, hi);
  } else {
    bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  codes[0] = _mm256_cvtepu8_epi32(bytes);
  codes[1] = _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, kLanes));
}

}  // namespace

void widen_rows_avx2(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                     int64_t out_stride) {
  if (fmt == OperandFormat::kBF16) return;
  const Table& t = table(fmt);
  const bool nibbles = fmt == OperandFormat::kE2M1;
  for (int64_t r = 0; r < rows; ++r) {
    __m256i codes[2];
    row_codes(in + r * in_stride, nibbles, codes);
    const __m256i lo = _mm256_i32gather_epi32(t.bf16, codes[0], sizeof(int32_t));
    const __m256i hi = _mm256_i32gather_epi32(t.bf16, codes[1], sizeof(int32_t));
    // packus works per 128-bit lane: words come out as lo0-3 hi0-3 lo4-7 hi4-7; put them back in order.
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * out_stride), words);
  }
}

}  // namespace deepgemm_ascend::tile::host
