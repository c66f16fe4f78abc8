// The pipelining primitives of the tile machine (host target). Each names its pipe; in checked mode
// each verifies buffer position, alignment, extent and stage ownership before touching memory.
//
//   copy_gm_to_l1    MTE2  GM (any strides) -> L1 Nz, tails zero-padded
//   copy_gm_to_l1b   MTE2  GM (any strides) [N, K] B tile -> L1 K-pair panels (host/pair_panels.hpp), likewise
//   load_l1_to_l0a   MTE1  L1 Nz -> L0A Nz (a K range of the L1 tile), widening 8/4-bit to bf16
//   load_l1_to_l0b   MTE1  L1 K-pair panels of the B tile -> L0B cube format (a copy; bf16 in unchecked runs:
//                          left in L1 for mmad, host/l0_views.hpp, as is a bf16 Nz L0A), widening likewise
//   mmad             M     L0C (=|+=) L0A x L0B, fp32 accumulation; with scales, the product of the
//                          K block is promoted: L0C (=|+=) (L0A x L0B) x scale_a(row) x scale_b(col)
//   fixpipe          FIX   L0C -> GM row-major with a cast, optionally adding a GM source C
#pragma once

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/host/core.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/fixpipe_dst.hpp"
#include "deepgemm_ascend/tile/operand.hpp"
#include "deepgemm_ascend/host/scale_fold.hpp"

namespace deepgemm_ascend::tile::host {

void copy_gm_to_l1(Core& core, const LocalTile& dst, const layout::NzGeometry& g, const layout::MatrixRef& src);
// The B operand's copy: the tile takes g.bytes() as Nz would, in the host's L1 format of B.
void copy_gm_to_l1b(Core& core, const LocalTile& dst, const layout::NzGeometry& g, const layout::MatrixRef& src);

// Copies columns [k_off, k_off + k_pad) of the L1 tile (geometry src_g, values in format `fmt`) into a
// bf16 L0A tile of src_g.rows_pad x k_pad (k_off, k_pad multiples of 16). With fold.s, the widened values are
// multiplied by their power-of-two scales (host/scale_fold.hpp); likewise for L0B.
void load_l1_to_l0a(Core& core, const LocalTile& dst, const LocalTile& src, const layout::NzGeometry& src_g,
                    int64_t k_off, int64_t k_pad, OperandFormat fmt = OperandFormat::kBF16, const FoldScales& fold = {});

// Copies columns [k_off, k_off + dst_g.k_pad) of the L1 B tile (rows = N, written by copy_gm_to_l1b) into a
// bf16 L0B tile.
void load_l1_to_l0b(Core& core, const LocalTile& dst, const L0BGeometry& dst_g, const LocalTile& src,
                    const layout::NzGeometry& src_g, int64_t k_off, OperandFormat fmt = OperandFormat::kBF16,
                    const FoldScales& fold = {});

void mmad(Core& core, const LocalTile& c, const L0CGeometry& c_g, const LocalTile& a, const LocalTile& b,
          int64_t k_pad, bool init, const float* row_scale = nullptr, const float* col_scale = nullptr);

void fixpipe(Core& core, const FixpipeDst& dst, const LocalTile& c, const L0CGeometry& c_g);

}  // namespace deepgemm_ascend::tile::host
