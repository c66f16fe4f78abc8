#include "deepgemm_ascend/npu_model/fixpipe.hpp"

#include <cstring>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
constexpr int64_t kRows = 16, kC0Floats = 16, kZFloats = kRows * kC0Floats;

void put(uint8_t* at, float v, FixQuant q, bool add) {
  if (q == FixQuant::kNone) {
    float old = 0.0f;
    if (add) std::memcpy(&old, at, sizeof old);
    const float out = add ? old + v : v;
    std::memcpy(at, &out, sizeof out);
    return;
  }
  const uint16_t h = q == FixQuant::kF322BF16 ? core::float_to_bf16(v) : core::float_to_fp16(v);
  std::memcpy(at, &h, sizeof h);
}
}  // namespace

void fixpipe(uint8_t* const dst[2], const float* src, const Fixpipe& op, Accesses* acc) {
  DGA_REQUIRE(op.nz2nd, kNotImplemented, "nz2nd", "only the NZ2ND Fixpipe is modelled");
  DGA_REQUIRE(!(op.atomic_add && op.quant != FixQuant::kNone), kNotImplemented, "atomic_add",
              "atomic add is modelled for fp32 outputs only");
  DGA_REQUIRE(!(op.dual_split_m && op.m % 2 != 0), kValue, "m", "a dual-destination split by rows needs an even m, got ",
              op.m);
  if (op.m == 0 || op.n == 0 || op.nd_num == 0) return;
  const int64_t out_bytes = op.quant == FixQuant::kNone ? 4 : 2, half = op.dual_split_m ? op.m / 2 : op.m;
  for (int64_t nd = 0; nd < op.nd_num; ++nd)
    for (int64_t i = 0; i < op.m; ++i)
      for (int64_t j = 0; j < op.n; ++j) {
        const float* at = &src[nd * op.src_nd_stride * kZFloats + (j / kC0Floats) * op.src_stride * kC0Floats +
                               i * kC0Floats + j % kC0Floats];
        const float v = *at;
        const int64_t row = i % half, sub = i / half;
        put(dst[sub] + (nd * op.dst_nd_stride + row * op.dst_stride + j) * out_bytes, v, op.quant, op.atomic_add);
        if (j % kC0Floats == 0) note(acc, at, kC0Floats * sizeof(float), false);  // the source C0 of (i, j)
        if (j == 0)
          note(acc, dst[sub] + (nd * op.dst_nd_stride + row * op.dst_stride) * out_bytes, size_t(op.n * out_bytes), true);
      }
}

}  // namespace deepgemm_ascend::npu_model
