// The host's L1 format of the B operand: K-pair panels. Per 16 rows of the [N, K] tile, the whole padded K
// range with its K pairs side by side: L0B's order (tile/cube_format.hpp) over all of L1's columns, value
// (n, k) at pair_panels(g).offset(k, n), counted in values of the operand format (a K pair of packed 4-bit
// values is one byte, the even K value in its low nibble). copy_gm_to_l1b writes it, so that L1 -> L0B is a
// copy (bf16) or a widening (8 / 4-bit) of one contiguous run per 16 columns of N, with no transpose.
// The tile takes exactly the bytes of its Nz geometry. (The NPU keeps B as Nz in L1; its L0B load makes Zn.)
#pragma once

#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"

namespace deepgemm_ascend::tile::host {

inline L0BGeometry pair_panels(const layout::NzGeometry& g) { return {g.cols_pad, g.rows_pad}; }

// Writes src (rows x cols of g.bits-bit codes, any strides) into dst as K-pair panels of geometry g
// (g.rows_pad >= rows, g.cols_pad >= cols, a multiple of C0), every padding value zero.
void nd_to_pair_panels(const layout::MatrixRef& src, void* dst, const layout::NzGeometry& g);

}  // namespace deepgemm_ascend::tile::host
