// Epilogue of the MQA-logits kernel: the vector side of the AIC/AIV split. The cube leaves scores of
// (query row, head) x KV row in L0C; this reduces the heads: for every query i and KV row j of the tile,
//   logit(i, j) = kv_scale[j] * sum_h relu(score(i, h, j)) * weight(i, h)    if ks[i] <= j < ke[i],
// -inf where cleaning asks for it, nothing otherwise. Compressed output puts column j at j - ks[i].
#pragma once

#include <cstdint>

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/host/core.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"

namespace deepgemm_ascend::tile::host {

struct MqaOutput {
  const float* weights;       // [S, H], row stride w_stride (already widened to fp32)
  int64_t w_stride;
  const int32_t* ks;          // [S]
  const int32_t* ke;          // [S]
  const float* kv_scale;      // [SKV] or null (scales already applied in the cube)
  void* logits;               // element (i, 0)
  int64_t logits_stride;
  core::DType logits_dtype;   // kFP32 or kBF16
  int64_t heads;
  int64_t skv;
  bool clean;
  bool compressed;
};

// Reduces the L0C tile of queries [q0, q0 + nq) x KV rows [n0, n0 + cols).
void mqa_reduce_tile(tile::host::Core& core, const MqaOutput& out, const tile::host::LocalTile& l0c, const tile::L0CGeometry& c_g,
                     int64_t q0, int64_t nq, int64_t n0, int64_t cols);

// Writes -inf over columns [n0, n0 + cols) of queries [q0, q0 + nq) where cleaning asks for it (tiles
// the cube skipped because no query of the tile has a KV row in them).
void mqa_clean_tile(const MqaOutput& out, int64_t q0, int64_t nq, int64_t n0, int64_t cols);

}  // namespace deepgemm_ascend::tile::host
