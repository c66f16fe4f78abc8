#include "deepgemm_ascend/host/host_mqa_vector.hpp"

#include <algorithm>
#include <cmath>

namespace deepgemm_ascend::tile::host {

void mqa_reduce_query(Core& core, const kernel::MqaJob<kernel::MqaSegment>& job, const kernel::MqaQuery& x,
                      const LocalTile& l0c, const L0CGeometry& c_g, const DgaMqaParams& p) {
  core.check_access(l0c, Pos::kL0C, Pipe::kFIX, "mqa_reduce_query");
  core.check_extent(l0c, uint64_t(c_g.bytes()), "mqa_reduce_query");
  constexpr int64_t B = kCubeBlock;
  const kernel::MqaSegment& s = job.seg;
  const int64_t ks = s.ks != 0 ? at_address<const int32_t>(s.ks)[x.q] : 0, ke = at_address<const int32_t>(s.ke)[x.q];
  const int64_t n0 = s.col0 + job.n0;  // the KV row of the job's first column
  const float* c = l0c.as<const float>();
  const float* w = at_address<const float>(s.weights) + x.q * p.w_stride + x.head;
  const float* scale = s.kv_scale != 0 ? at_address<const float>(s.kv_scale) + job.n0 : nullptr;
  float* out = at_address<float>(s.logits) + x.q * p.logits_stride + job.n0;
  for (int64_t c0 = 0; c0 < job.cols; c0 += B) {
    const int64_t len = std::min(B, job.cols - c0);
    if (n0 + c0 + len <= ks || n0 + c0 >= ke) {  // no column of the block in range
      std::fill(out + c0, out + c0 + len, -INFINITY);
      continue;
    }
    float acc[B] = {};
    for (int64_t h = 0; h < x.count; ++h) {
      const float* row = c + c_g.offset(x.first + h, c0);
      for (int64_t t = 0; t < B; ++t) acc[t] += std::max(row[t], 0.0f) * w[h];
    }
    for (int64_t t = 0; t < len; ++t) {
      const int64_t j = n0 + c0 + t;
      out[c0 + t] = j >= ks && j < ke ? (scale != nullptr ? acc[t] * scale[c0 + t] : acc[t]) : -INFINITY;
    }
  }
}

}  // namespace deepgemm_ascend::tile::host
