#include "deepgemm_ascend/block/swiglu.hpp"

#include <algorithm>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::block {

namespace {

constexpr int64_t kInterleave = kSwigluInterleave;

}  // namespace

std::pair<int64_t, int64_t> swiglu_columns(int64_t j, int64_t inter, bool interleaved) {
  if (!interleaved) return {j, inter + j};
  const int64_t base = (j / kInterleave) * 2 * kInterleave + j % kInterleave;
  return {base, base + kInterleave};
}

}  // namespace deepgemm_ascend::block

namespace deepgemm_ascend::tile::host {

void silu_mul_scalar(const SiluMulArgs& s) {
  for (int64_t j = 0; j < s.n; ++j) {
    const auto c = block::swiglu_columns(s.j0 + j, s.inter, s.interleaved);
    const float gate = std::min(core::bf16_to_float(s.h[c.first]), s.clamp);
    const float up = std::min(std::max(core::bf16_to_float(s.h[c.second]), -s.clamp), s.clamp);
    s.act[j] = gate / (1.0f + std::exp(-gate)) * up * s.weight;
  }
}

float group_amax_scalar(const float* v, int64_t n) {
  float amax = 0.0f;
  for (int64_t j = 0; j < n; ++j) amax = std::max(amax, std::fabs(v[j]));  // NaN does not count
  return amax;
}

void encode_e4m3_scalar(const float* v, int64_t n, float scale, uint8_t* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = core::float_to_e4m3(v[j] * scale);
}

}  // namespace deepgemm_ascend::tile::host

namespace deepgemm_ascend::block {

void swiglu_row(const uint16_t* h, int64_t inter, float weight, const SwigluParams& p, void* out, ScaleOut sf) {
  float act[kSwigluScaleGroup];
  const tile::host::SwigluKernels k = tile::host::swiglu_kernels();
  for (int64_t j0 = 0; j0 < inter; j0 += kSwigluScaleGroup) {
    const int64_t n = std::min(kSwigluScaleGroup, inter - j0);
    k.silu_mul({.h = h, .inter = inter, .j0 = j0, .n = n, .interleaved = p.interleaved, .clamp = p.clamp,
                .weight = weight, .act = act});
    if (!p.fp8_out) {
      auto* o = static_cast<uint16_t*>(out) + j0;
      for (int64_t j = 0; j < n; ++j) o[j] = core::float_to_bf16(act[j]);
      continue;
    }
    const uint8_t code = swiglu_scale_code(k.group_amax(act, n));
    const int64_t g = j0 / kSwigluScaleGroup;
    sf.row[(g / kScalesPerWord) * sf.k_stride + g % kScalesPerWord] = code;
    k.encode_e4m3(act, n, swiglu_inverse_scale(code), static_cast<uint8_t*>(out) + j0);
  }
}

}  // namespace deepgemm_ascend::block
