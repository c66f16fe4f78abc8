#include "deepgemm_ascend/npu_model/fixpipe.hpp"

#include <cmath>
#include <cstring>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
constexpr int64_t kRows = 16, kC0Floats = 16, kZFloats = kRows * kC0Floats;
constexpr uint16_t kMaxNSize = 4095;
constexpr int kCtrlNoSaturationBit = 48, kCtrlGlobalSaturationBit = 60;
constexpr StartRule kGmSrc{"src", "L0C", 64, "L0C到GM数据搬运（Fixpipe）.md"};
constexpr StartRule kUbSrc{"src", "L0C", 64, "L0C到UB数据搬运（Fixpipe）.md"};
constexpr StartRule kUbDst{"dst", "UB", 32, "L0C到UB数据搬运（Fixpipe）.md"};

// A cast result of 16 bits: saturating, NaN -> +0 and +-inf (an input's, or an overflow's) -> +-max.
uint16_t saturated(uint16_t h, float v, uint16_t inf, uint16_t max) {
  constexpr uint16_t kSign = 0x8000;
  if (std::isnan(v)) return 0;
  return (h & ~kSign) == inf ? uint16_t((h & kSign) | max) : h;
}

void check(const Fixpipe& op) {
  DGA_REQUIRE(op.n <= kMaxNSize, kValue, "nSize", "nSize in [0, ", kMaxNSize, "], got ", op.n);
  const int64_t m16 = (int64_t(op.m) + kRows - 1) / kRows * kRows;
  DGA_REQUIRE(op.src_stride >= m16, kValue, "srcStride", "srcStride (C0 units between Z columns) must be at least ",
              "align16(mSize) = ", m16, ", got ", op.src_stride);
  DGA_REQUIRE(op.dst_stride != 0, kValue, "dstStride", "dstStride must not be 0");
  const int64_t out_bytes = op.quant == FixQuant::kNone ? 4 : 2;
  DGA_REQUIRE(!op.to_ub || op.n * out_bytes % 32 == 0, kValue, "nSize", "a Fixpipe to UB with NZ2ND needs nSize * ",
              out_bytes, " B a multiple of 32 B, got nSize ", op.n, " (L0C到UB数据搬运（Fixpipe）.md)");
}

void put(uint8_t* at, float v, FixQuant q, bool add, bool saturate) {
  if (q == FixQuant::kNone) {
    float old = 0.0f;
    if (add) std::memcpy(&old, at, sizeof old);
    const float out = add ? old + v : v;
    std::memcpy(at, &out, sizeof out);
    return;
  }
  constexpr uint16_t kBf16Inf = 0x7F80, kBf16Max = 0x7F7F, kFp16Inf = 0x7C00, kFp16Max = 0x7BFF;
  const bool bf16 = q == FixQuant::kF322BF16;
  uint16_t h = bf16 ? core::float_to_bf16(v) : core::float_to_fp16(v);
  if (saturate) h = bf16 ? saturated(h, v, kBf16Inf, kBf16Max) : saturated(h, v, kFp16Inf, kFp16Max);
  std::memcpy(at, &h, sizeof h);
}
}  // namespace

bool fixpipe_saturates(uint64_t ctrl) {
  DGA_REQUIRE((ctrl >> kCtrlGlobalSaturationBit) & 1, kNotImplemented, "CTRL",
              "a Fixpipe cast with CTRL[60] = 0 (per-instruction saturation, which the Fixpipe has no operand for) ",
              "is not documented");
  return ((ctrl >> kCtrlNoSaturationBit) & 1) == 0;
}

void fixpipe(uint8_t* const dst[2], const float* src, const Fixpipe& op, Accesses* acc) {
  DGA_REQUIRE(op.nz2nd, kNotImplemented, "nz2nd", "only the NZ2ND Fixpipe is modelled");
  DGA_REQUIRE(!(op.atomic_add && op.quant != FixQuant::kNone), kNotImplemented, "atomic_add",
              "atomic add is modelled for fp32 outputs only");
  DGA_REQUIRE(!(op.dual_split_m && op.m % 2 != 0), kValue, "m", "a dual-destination split by rows needs an even m, got ",
              op.m);
  DGA_REQUIRE(!(op.src_s32 && op.quant != FixQuant::kNone), kNotImplemented, "quantPre",
              "a Fixpipe from an int32 L0C is modelled with NoQuant (int32 -> int32) only");
  DGA_REQUIRE(!(op.src_s32 && op.atomic_add), kNotImplemented, "atomic_add",
              "atomic add on an int32 Fixpipe output is not modelled");
  if (op.m == 0 || op.n == 0 || op.nd_num == 0) return;
  check(op);
  note_start(acc, src, op.to_ub ? kUbSrc : kGmSrc);
  if (op.to_ub) note_start(acc, dst[0], kUbDst);
  if (op.to_ub && op.dual_split_m) note_start(acc, dst[1], kUbDst);
  const int64_t out_bytes = op.quant == FixQuant::kNone ? 4 : 2, half = op.dual_split_m ? op.m / 2 : op.m;
  for (int64_t nd = 0; nd < op.nd_num; ++nd)
    for (int64_t i = 0; i < op.m; ++i)
      for (int64_t j = 0; j < op.n; ++j) {
        const float* at = &src[nd * op.src_nd_stride * kZFloats + (j / kC0Floats) * op.src_stride * kC0Floats +
                               i * kC0Floats + j % kC0Floats];
        const int64_t row = i % half, sub = i / half;
        uint8_t* to = dst[sub] + (nd * op.dst_nd_stride + row * op.dst_stride + j) * out_bytes;
        if (op.src_s32) std::memcpy(to, at, sizeof(int32_t));  // int32 -> int32, NoQuant
        else put(to, *at, op.quant, op.atomic_add, op.saturate);
        if (j % kC0Floats == 0) note(acc, at, kC0Floats * sizeof(float), false);  // the source C0 of (i, j)
        if (j == 0)
          note(acc, dst[sub] + (nd * op.dst_nd_stride + row * op.dst_stride) * out_bytes, size_t(op.n * out_bytes), true);
      }
}

}  // namespace deepgemm_ascend::npu_model
