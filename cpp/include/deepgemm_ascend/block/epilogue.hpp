// Epilogue of a GEMM tile: L0C -> D through the fixpipe, casting to D's dtype and optionally
// adding C (D = C + A @ B with a single rounding).
#pragma once

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/tile/primitives.hpp"

namespace deepgemm_ascend::block {

struct EpilogueArgs {
  layout::MutMatrixRef d;  // logical [M, N]
  core::DType d_dtype;
  layout::MatrixRef c;     // logical [M, N]; used when has_c
  bool has_c = false;
};

inline void store_tile(tile::Core& core, const EpilogueArgs& e, int64_t m0, int64_t n0, int64_t rows, int64_t cols,
                       const tile::LocalTile& l0c, const tile::L0CGeometry& c_g) {
  const layout::MatrixRef c = e.c.block(m0, n0, rows, cols);
  tile::fixpipe(core, {e.d.block(m0, n0, rows, cols), e.d_dtype, e.has_c ? &c : nullptr}, l0c, c_g);
}

}  // namespace deepgemm_ascend::block
