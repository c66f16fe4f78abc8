// Power-of-two scales folded into widened L0 tiles (host; layout/scale_fold.hpp): with block::Scaling::fold the
// L0 loads multiply each value by its row's scale for its K block by adding the scale's exponent to the bf16
// exponent field, and the cube accumulates the whole K range unpromoted.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/layout/scale_ref.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/tile/operand.hpp"

namespace deepgemm_ascend::tile::host {

// The scales of one L0 load: row r < rows of the tile takes s->at(row0 + r, K block), the load's column 0 being
// global K column k0. Rows at and after `rows` (padding, zeros) are left alone.
struct FoldScales {
  const layout::ScaleRef* s = nullptr;  // null: nothing folded
  int64_t row0 = 0, rows = 0, k0 = 0;
};

// Columns [k_off, k_off + k_pad) of an L1 Nz tile of 8 / 4-bit codes (geometry g) widened into L0A (the active
// micro-kernel's K grouping) with the scales folded in.
void widen_folded_l0a(const uint8_t* l1, const layout::NzGeometry& g, int64_t k_off, int64_t k_pad, OperandFormat fmt,
                      uint16_t* l0a, const FoldScales& fold);
// The same for L0B (cube_format.hpp) from an L1 tile of K-pair panels (pair_panels.hpp).
void widen_folded_l0b(const uint8_t* l1, const layout::NzGeometry& g, int64_t k_off, const L0BGeometry& l0b_g,
                      OperandFormat fmt, uint16_t* l0b, const FoldScales& fold);

}  // namespace deepgemm_ascend::tile::host
