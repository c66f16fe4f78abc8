// Where the fixpipe writes an L0C tile: D (rows x cols, row-major rows) in its dtype, optionally adding
// a source C of the same dtype before the cast.
#pragma once

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"

namespace deepgemm_ascend::tile {

struct FixpipeDst {
  layout::MutMatrixRef d;          // rows x cols written
  core::DType dtype;               // kBF16 or kFP32
  const layout::MatrixRef* c;      // optional source added before the cast (same dtype as d)
};

}  // namespace deepgemm_ascend::tile
