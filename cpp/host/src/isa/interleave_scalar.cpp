// K-pair interleave (L0B's order) of 16 x 16 bf16 values, portable: pair word p of row n goes to out[p * 16 + n].
#include <cstdint>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

void interleave_k_pairs_scalar(const uint16_t* f, int64_t stride, uint32_t* out) {
  // Little endian: the even K value is the low half of the pair word.
  for (int64_t n = 0; n < kCubeBlock; ++n)
    for (int64_t p = 0; p < kCubeBlock / kKPair; ++p)
      out[p * kCubeBlock + n] = uint32_t(f[n * stride + 2 * p]) | uint32_t(f[n * stride + 2 * p + 1]) << 16;
}

}  // namespace deepgemm_ascend::tile::host
