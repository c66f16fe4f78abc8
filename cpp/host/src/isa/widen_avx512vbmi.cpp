// AVX-512 widening of 8-bit codes on CPUs with AVX512-VBMI (only this file is compiled with its flag): the
// magnitude's bf16 as two byte lookups of 128 entries (one vpermt2b each for its low and its high bytes, the
// code's sign bit ignored by the index and moved to bf16's), joined by an unpack: five instructions per 32
// codes where the word tables of widen_avx512.cpp take two vpermt2w, a blend and the sign's shifts. The
// tables are the scalar reference's results (widened_codes), so the bits agree by construction. Packed
// 4-bit codes go to widen_avx512.cpp.
#include <immintrin.h>

#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/widen.hpp"
#include "widen_avx512_body.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kBytes = 64, kMagnitudes = 128, kLaneBytes = 16, kHalfLane = 8;
constexpr int kBf16Bits = 8;

struct ByteLookup {
  __m512i lo[2], hi[2];  // low / high bytes of the bf16 of magnitudes [64 i, 64 i + 64)
  __m512i spread;        // byte 16 L + i (i < 8) <- code 8 L + i: unpacklo then yields the codes in order

  // 32 codes (bytes, in order) -> their 32 bf16 (in order).
  __m512i operator()(__m256i codes) const {
    const __m512i c = _mm512_permutexvar_epi8(spread, _mm512_zextsi256_si512(codes));
    const __m512i low = _mm512_permutex2var_epi8(lo[0], c, lo[1]);  // index bits 0-6: bit 7 (the sign) ignored
    const __m512i high = _mm512_permutex2var_epi8(hi[0], c, hi[1]);
    constexpr int kOrAnd = 0xF8;  // a | (b & c)
    return _mm512_unpacklo_epi8(low, _mm512_ternarylogic_epi32(high, c, _mm512_set1_epi8(char(0x80)), kOrAnd));
  }
};

ByteLookup make_lookup(OperandFormat fmt) {
  alignas(64) uint8_t lo[kMagnitudes], hi[kMagnitudes], spread[kBytes];
  const uint16_t* bf16 = widened_codes(fmt);
  for (int m = 0; m < kMagnitudes; ++m) lo[m] = uint8_t(bf16[m]), hi[m] = uint8_t(bf16[m] >> kBf16Bits);
  for (int b = 0; b < kBytes; ++b) {
    const int lane = b / kLaneBytes, i = b % kLaneBytes;
    spread[b] = uint8_t(i < kHalfLane ? kHalfLane * lane + i : 0);
  }
  ByteLookup l{};
  for (int i = 0; i < 2; ++i) {
    l.lo[i] = _mm512_load_si512(lo + i * kBytes);
    l.hi[i] = _mm512_load_si512(hi + i * kBytes);
  }
  l.spread = _mm512_load_si512(spread);
  return l;
}

const ByteLookup& lookup(OperandFormat fmt) {
  static const ByteLookup e4m3 = make_lookup(OperandFormat::kE4M3), e5m2 = make_lookup(OperandFormat::kE5M2);
  return fmt == OperandFormat::kE4M3 ? e4m3 : e5m2;
}

}  // namespace

void widen_rows_avx512vbmi(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                           int64_t out_stride) {
  if (fmt != OperandFormat::kE4M3 && fmt != OperandFormat::kE5M2)
    return widen_rows_avx512(fmt, in, in_stride, rows, out, out_stride);
  widen_rows8(lookup(fmt), in, in_stride, rows, out, out_stride);
}

void widen_fold_avx512vbmi(OperandFormat fmt, const uint8_t* in, int64_t in_stride, int64_t rows, uint16_t* out,
                           int64_t out_stride, const uint16_t* step, bool step_per_row) {
  widen_fold8(lookup(fmt), in, in_stride, rows, out, out_stride, step, step_per_row);
}

}  // namespace deepgemm_ascend::tile::host
