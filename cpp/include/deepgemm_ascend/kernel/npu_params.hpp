// Launch parameters of the NPU kernels (cpp/kernels/ascend), passed by value from the host: plain
// data shared by the host launcher and the bisheng-compiled kernels.
#pragma once

#include <cstdint>

struct DgaGemmParams {
  uint64_t a, b, d;  // device addresses of A [M, K], B [N, K], D [M, N] (row-major, leading dims below)
  int64_t m, n, k, lda, ldb, ldd;
  int64_t block_m, block_n, block_k, l0_k;  // tile config chosen by the Ascend 950 heuristics
  int32_t swizzle_band, swizzle_along_m;
};
