// The pipelining primitives of the tile machine (host target). Each names its pipe; in checked mode
// each verifies buffer position, alignment, extent and stage ownership before touching memory.
//
//   copy_gm_to_l1    MTE2  GM (any strides) -> L1 Nz, tails zero-padded
//   load_l1_to_l0a   MTE1  L1 Nz -> L0A Nz (a K range of the L1 tile)
//   load_l1_to_l0b   MTE1  L1 Nz of the [N, K] B tile -> L0B cube format
//   mmad             M     L0C (=|+=) L0A x L0B, fp32 accumulation
//   fixpipe          FIX   L0C -> GM row-major with a cast, optionally adding a GM source C
#pragma once

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/tile/core.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"

namespace deepgemm_ascend::tile {

void copy_gm_to_l1(Core& core, const LocalTile& dst, const layout::NzGeometry& g, const layout::MatrixRef& src);

// Copies columns [k_off, k_off + k_pad) of the L1 tile (geometry src_g) into an L0A tile of
// src_g.rows_pad x k_pad.
void load_l1_to_l0a(Core& core, const LocalTile& dst, const LocalTile& src, const layout::NzGeometry& src_g,
                    int64_t k_off, int64_t k_pad);

// Copies columns [k_off, k_off + dst_g.k_pad) of the L1 B tile (rows = N) into L0B.
void load_l1_to_l0b(Core& core, const LocalTile& dst, const L0BGeometry& dst_g, const LocalTile& src,
                    const layout::NzGeometry& src_g, int64_t k_off);

void mmad(Core& core, const LocalTile& c, const L0CGeometry& c_g, const LocalTile& a, const LocalTile& b,
          int64_t k_pad, bool init);

struct FixpipeDst {
  layout::MutMatrixRef d;          // rows x cols written
  core::DType dtype;               // kBF16 or kFP32
  const layout::MatrixRef* c;      // optional source added before the cast (same dtype as d)
};
void fixpipe(Core& core, const FixpipeDst& dst, const LocalTile& c, const L0CGeometry& c_g);

}  // namespace deepgemm_ascend::tile
