// ND <-> Nz / Zn transforms (host). Sources are any strided matrix; destinations are dense fractal
// buffers of the given padded geometry, with every padding value written as zero.
#pragma once

#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"

namespace deepgemm_ascend::layout {

// Writes src (rows x cols) into dst as Nz of geometry g (g.rows_pad >= rows, g.cols_pad >= cols).
void nd_to_nz(const MatrixRef& src, void* dst, const NzGeometry& g);
// Reads the top-left dst.rows x dst.cols values of an Nz buffer of geometry g into dst.
void nz_to_nd(const void* src, const NzGeometry& g, const MutMatrixRef& dst);

// Zn of X == Nz of X^T: the geometry is that of the transposed matrix.
inline NzGeometry zn_geometry(int64_t rows, int64_t cols, int bits) { return NzGeometry::fit(cols, rows, bits); }
inline void nd_to_zn(const MatrixRef& src, void* dst, const NzGeometry& g) { nd_to_nz(src.transposed(), dst, g); }
inline void zn_to_nd(const void* src, const NzGeometry& g, const MutMatrixRef& dst) {
  nz_to_nd(src, g, dst.transposed());
}

}  // namespace deepgemm_ascend::layout
