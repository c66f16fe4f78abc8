#include "deepgemm_ascend/host/mqa_epilogue.hpp"

#include <algorithm>
#include <cmath>

#include "deepgemm_ascend/core/convert.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

inline void store(const MqaOutput& out, int64_t i, int64_t col, float v) {
  if (out.logits_dtype == core::DType::kFP32)
    static_cast<float*>(out.logits)[i * out.logits_stride + col] = v;
  else
    static_cast<uint16_t*>(out.logits)[i * out.logits_stride + col] = core::float_to_bf16(v);
}

}  // namespace

void mqa_reduce_tile(tile::host::Core& core, const MqaOutput& out, const tile::host::LocalTile& l0c, const tile::L0CGeometry& c_g,
                     int64_t q0, int64_t nq, int64_t n0, int64_t cols) {
  core.check_access(l0c, tile::Pos::kL0C, tile::Pipe::kFIX, "mqa_reduce_tile");
  core.check_extent(l0c, uint64_t(c_g.bytes()), "mqa_reduce_tile");
  constexpr int64_t B = tile::kCubeBlock;
  const float* c = l0c.as<const float>();
  for (int64_t nb = 0; nb < c_g.n_pad / B; ++nb) {
    const int64_t j0 = n0 + nb * B, len = std::min(B, cols - nb * B);
    for (int64_t qi = 0; qi < nq; ++qi) {
      const int64_t i = q0 + qi;
      const int64_t lo = out.ks[i], hi = out.ke[i];
      if (j0 + len <= lo || j0 >= hi) {
        if (out.clean && !out.compressed)
          for (int64_t t = 0; t < len; ++t) store(out, i, j0 + t, -INFINITY);
        continue;
      }
      float acc[B] = {};
      const float* w = out.weights + i * out.w_stride;
      for (int64_t h = 0; h < out.heads; ++h) {
        const float* row = c + c_g.offset(qi * out.heads + h, nb * B);
        for (int64_t t = 0; t < B; ++t) acc[t] += std::max(row[t], 0.0f) * w[h];
      }
      for (int64_t t = 0; t < len; ++t) {
        const int64_t j = j0 + t;
        if (j >= lo && j < hi)
          store(out, i, out.compressed ? j - lo : j, out.kv_scale ? acc[t] * out.kv_scale[j] : acc[t]);
        else if (out.clean && !out.compressed)
          store(out, i, j, -INFINITY);
      }
    }
  }
}

void mqa_clean_tile(const MqaOutput& out, int64_t q0, int64_t nq, int64_t n0, int64_t cols) {
  if (!out.clean || out.compressed) return;
  for (int64_t i = q0; i < q0 + nq; ++i)
    for (int64_t j = n0; j < n0 + cols; ++j) store(out, i, j, -INFINITY);
}

}  // namespace deepgemm_ascend::tile::host
