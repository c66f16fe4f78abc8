#include "deepgemm_ascend/layout/scale_fold.hpp"

namespace deepgemm_ascend::layout {

bool all_scales_fold(const ScaleRef& s, int64_t rows, int64_t k) {
  const int64_t blocks = (k + s.gran_k - 1) / s.gran_k;
  for (int64_t r = 0; r < rows; r += s.gran_mn)
    for (int64_t kb = 0; kb < blocks; ++kb)
      if (fold_exponent(s.at(r, kb)) == kNotFoldable) return false;
  return true;
}

}  // namespace deepgemm_ascend::layout
