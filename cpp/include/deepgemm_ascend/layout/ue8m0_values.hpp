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

// Throws a ValueError naming `arg`, the number of bad values and the first one. `sf` is 1-D to 3-D in host
// memory; `rows` (optional) limits the check to those rows of every group.
void require_ue8m0_values(const core::TensorView& sf, const char* arg, const RowRanges* rows = nullptr);

// The rows an M-grouped psum layout gives its groups: [align_up(end[g - 1], alignment), end[g]) for the end
// offsets `ends` (ascending, at most `rows`; ValueError against `arg` otherwise).
RowRanges psum_rows(const std::vector<int64_t>& ends, int64_t rows, int64_t alignment, const char* arg);

}  // namespace deepgemm_ascend::layout
