// The cube's arithmetic on decoded operands (cube.cpp): double dot products over packed row panels, each
// output summed from its start value in ascending K order. Internal to the model.
#pragma once

#include <cstdint>

namespace deepgemm_ascend::npu_model {

// Rows of A and of B per packed panel: one register block of outputs is kDotRows x kDotCols.
constexpr int64_t kDotRows = 4, kDotCols = 8;

// A as m_panels panels of kDotRows rows, value (r, x) at ((r / kDotRows) * k + x) * kDotRows + r % kDotRows;
// B likewise in panels of kDotCols rows (B's rows are C's columns). out is row-major, m_panels * kDotRows
// rows of n_panels * kDotCols values, holding each output's start value; on return
//   out(i, j) = (((start + a(i, 0) b(j, 0)) + a(i, 1) b(j, 1)) + ...) + a(i, k - 1) b(j, k - 1)
// with every product exact (the caller's operands have at most 24 significant bits and a double exponent
// range), so a fused multiply-add gives the same sums as a multiply and an add.
struct DotPanels {
  const double* a = nullptr;
  const double* b = nullptr;
  double* out = nullptr;
  int64_t m_panels = 0, n_panels = 0, k = 0;
};

void cube_dot(const DotPanels& p);

// The same kernel compiled for AVX2 + FMA (cube_dot_avx2.cpp, x86 builds); cube_dot picks it on CPUs that
// have both.
void cube_dot_avx2(const DotPanels& p);

}  // namespace deepgemm_ascend::npu_model
