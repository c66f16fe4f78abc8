// Epilogue of a GEMM tile: L0C -> D through the fixpipe, casting to D's dtype and optionally
// adding C (D = C + A @ B with a single rounding).
#pragma once

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/core/macros.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/fixpipe_dst.hpp"

namespace deepgemm_ascend::block {

struct EpilogueArgs {
  layout::MutMatrixRef d;  // logical [M, N]
  core::DType d_dtype;
  layout::MatrixRef c;     // logical [M, N]; used when has_c
  bool has_c = false;
};

template <class Target>
DGA_DEVICE void store_tile(typename Target::Ctx& ctx, const EpilogueArgs& e, int64_t m0, int64_t n0, int64_t rows,
                           int64_t cols, const typename Target::Tile& l0c, const tile::L0CGeometry& c_g) {
  const layout::MatrixRef c = e.c.block(m0, n0, rows, cols);
  Target::fixpipe(ctx, {e.d.block(m0, n0, rows, cols), e.d_dtype, e.has_c ? &c : nullptr}, l0c, c_g);
}

}  // namespace deepgemm_ascend::block
