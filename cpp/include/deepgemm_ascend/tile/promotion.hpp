// The scales of one promoted K block of a scaled GEMM: the product of the block is multiplied by the
// scale of its A row and of its B column before it is added to the fp32 accumulator.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/layout/scale_ref.hpp"

namespace deepgemm_ascend::tile {

struct Promotion {
  const layout::ScaleRef* a = nullptr;  // indexed by global row of A (M) and K block
  const layout::ScaleRef* b = nullptr;  // indexed by global row of B (N) and K block
  int64_t m0 = 0, n0 = 0;               // the tile's first row of A and of B
  int64_t k = 0;                        // the block's first global K column
};

}  // namespace deepgemm_ascend::tile
