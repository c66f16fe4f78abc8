// Pieces shared by the M-grouped and K-grouped GEMM entry points.
#pragma once

#include <vector>

#include "deepgemm_ascend/core/tensor_view.hpp"
#include "deepgemm_ascend/kernel/gemm_problems.hpp"
#include "gemm_common.hpp"

namespace deepgemm_ascend::api {

// Group g of a tensor with a leading group dimension.
inline core::TensorView group_view(const core::TensorView& t, int64_t g) { return index_leading(t, g); }

// A contiguous int32 vector of n entries, read on the host.
std::vector<int64_t> read_int32(const core::TensorView& t, const char* arg, int64_t n);

// Operand formats: bf16 without scales, fp8 / fp4 (api::operand) with them.
struct Formats {
  bool scaled;
  Operand a, b;  // b: one group (2-D view)
};
Formats formats(const core::TensorView& a2, const core::TensorView* sfa, const core::TensorView& b2,
                const core::TensorView* sfb);

// The launch shape of a grouped GEMM on the host: a GEMM of avg_m x n x k per problem (bf16 D of d_bytes,
// acc: D += A B^T), promoted at promote_k when scaled.
struct GroupedLaunch {
  int64_t avg_m, n, k;
  int d_bytes;
  bool acc;
  int64_t promote_k;
};
// Runs the host GEMM over `problems` (nothing when empty).
void launch_grouped(const char* name, const std::vector<kernel::GemmProblem>& problems, const Formats& f,
                    const GroupedLaunch& l);

// The K-grouped layouts need an alignment that is a multiple of the MX block: returns it.
int64_t k_grouped_alignment();

}  // namespace deepgemm_ascend::api
