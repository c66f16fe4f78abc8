// The values of scale factors that the MX recipes take as UE8M0 exponents: float32 scales must be +0 or exact
// positive powers of two (+0 is exponent byte 0, as upstream), stored exponent bytes (uint8, float8_e8m0fnu, or
// packed in int16 / int32 words) must not be 255 (NaN). One pass over host memory, nothing copied.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "deepgemm_ascend/core/tensor_view.hpp"

namespace deepgemm_ascend::layout {

// Row ranges [begin, end) of a scale tensor's second-to-last dimension; rows outside them are not checked.
using RowRanges = std::vector<std::pair<int64_t, int64_t>>;

// The rows of every group of a scale tensor whose values an output depends on: one RowRanges for all groups,
// or one per group (a masked layout's rows below masked_m[g]).
struct ScaleRows {
  std::vector<RowRanges> groups;
  const RowRanges& of(int64_t g) const { return groups.size() == 1 ? groups[0] : groups[size_t(g)]; }
};

// Throws a ValueError naming `arg`, the number of bad values and the first one. `sf` is 1-D to 3-D in host
// memory; `rows` (optional) limits the check to those rows (per group: as many entries as sf has groups).
void require_ue8m0_values(const core::TensorView& sf, const char* arg, const ScaleRows* rows = nullptr);

// The rows an M-grouped psum layout gives its groups: [align_up(end[g - 1], alignment), end[g]) for the end
// offsets `ends` (ascending, at most `rows`; ValueError against `arg` otherwise).
RowRanges psum_rows(const std::vector<int64_t>& ends, int64_t rows, int64_t alignment, const char* arg);

// The rows of an M-grouped contiguous layout with per-row group ids that belong to a group (id >= 0).
RowRanges id_rows(const int32_t* ids, int64_t rows);

// The rows of a masked layout's groups: [0, masked_m[g]) of each, counts clamped to [0, rows].
ScaleRows masked_rows(const int32_t* masked_m, int64_t groups, int64_t rows);

}  // namespace deepgemm_ascend::layout
