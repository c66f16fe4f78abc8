#include "deepgemm_ascend/layout/scale_fold.hpp"

#include <cstring>

namespace deepgemm_ascend::layout {

namespace {

// UE8M0 codes: 2^(code - bias) folds for code in [bias - kMaxFoldExponent, bias + kMaxFoldExponent] (never 0,
// the subnormal, nor the NaN code). One row's K blocks, read as stored: `pack` codes per element, elements
// k_stride bytes apart (no division per code: a call scans millions of codes).
bool ue8m0_row_folds(const uint8_t* row, const ScaleRef& s, int64_t blocks) {
  constexpr unsigned kLow = ScaleRef::kBias - kMaxFoldExponent, kSpan = 2 * kMaxFoldExponent;
  unsigned bad = 0;
  if (s.k_stride == s.pack) {  // K-major: the row's codes side by side
    for (int64_t kb = 0; kb < blocks; ++kb) bad |= unsigned(unsigned(row[kb]) - kLow > kSpan);
    return bad == 0;
  }
  for (int64_t kb = 0; kb < blocks; kb += s.pack, row += s.k_stride) {
    const int64_t n = blocks - kb < s.pack ? blocks - kb : s.pack;
    for (int64_t j = 0; j < n; ++j) bad |= unsigned(unsigned(row[j]) - kLow > kSpan);
  }
  return bad == 0;
}

// fp32: positive, no mantissa bits, exponent field in [bias - kMaxFoldExponent, bias + kMaxFoldExponent] (the sign
// bit lands above the field, outside the window): fold_exponent's rule, branch-free so that rows vectorise.
bool fp32_row_folds(const float* row, const ScaleRef& s, int64_t blocks) {
  constexpr int kMantissaBits = 23;
  constexpr uint32_t kMantissa = (1u << kMantissaBits) - 1, kLow = ScaleRef::kBias - kMaxFoldExponent,
                     kSpan = 2 * kMaxFoldExponent;
  uint32_t out = 0;
  for (int64_t kb = 0; kb < blocks; ++kb) {
    uint32_t bits;
    std::memcpy(&bits, row + kb * s.k_stride, sizeof bits);
    out |= (bits & kMantissa) | uint32_t((bits >> kMantissaBits) - kLow > kSpan);
  }
  return out == 0;
}

}  // namespace

bool all_scales_fold(const ScaleRef& s, int64_t rows, int64_t k) {
  const int64_t blocks = (k + s.gran_k - 1) / s.gran_k;
  for (int64_t r = 0; r < rows; r += s.gran_mn) {
    const int64_t row = r / s.gran_mn;
    const bool folds = s.ue8m0 ? ue8m0_row_folds(static_cast<const uint8_t*>(s.base) + row * s.mn_stride, s, blocks)
                               : fp32_row_folds(static_cast<const float*>(s.base) + row * s.mn_stride, s, blocks);
    if (!folds) return false;
  }
  return true;
}

}  // namespace deepgemm_ascend::layout
