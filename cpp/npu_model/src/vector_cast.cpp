// The vector core's integer and half conversions (vector.hpp): vcvt s32 -> f32 and f32 -> f16, from the Reg
// API's Cast.md (表4, 表5, 表7, 表8) and RoundMode.md.
#include <cmath>
#include <cstdint>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_elementwise.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
constexpr uint16_t kF16SignBit = 0x8000, kF16Abs = 0x7FFF, kF16Inf = 0x7C00, kF16Max = 0x7BFF, kF16Zero = 0;

// An int32 as fp32 under a RoundMode.md rounding: the two fp32 neighbours of v (an integer, exact in double)
// and the rule's choice between them.
float s32_to_f32(int32_t v, Round round) {
  const double x = double(v);
  const float nearest = float(x);  // the host's double -> float conversion: nearest, ties to even (RINT)
  if (double(nearest) == x || round == Round::kRint) return nearest;
  const float lo = double(nearest) < x ? nearest : std::nextafter(nearest, -INFINITY);
  const float hi = std::nextafter(lo, INFINITY);
  switch (round) {
    case Round::kFloor: return lo;
    case Round::kCeil: return hi;
    case Round::kTrunc: return x > 0 ? lo : hi;
    case Round::kRound: {  // nearest, a tie away from zero (四舍五入 on the magnitude)
      const double below = x - double(lo), above = double(hi) - x;
      if (below != above) return below < above ? lo : hi;
      return x > 0 ? hi : lo;
    }
    default: return nearest;  // (RINT; vcvt_s322f32 refused the others)
  }
}

// fp32 -> fp16, nearest even; saturating: NaN -> +0, infinities (the input's or an overflow's) -> +-max.
uint16_t to_f16(float x, bool saturate) {
  if (std::isnan(x)) return saturate ? kF16Zero : core::float_to_fp16(x);
  const uint16_t h = core::float_to_fp16(x);
  if (saturate && (h & kF16Abs) == kF16Inf) return uint16_t((h & kF16SignBit) | kF16Max);
  return h;
}
}  // namespace

void VectorCore::vcvt_s322f32(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Merge merge) const {
  DGA_REQUIRE(round == Round::kRint || round == Round::kRound || round == Round::kFloor || round == Round::kCeil ||
                  round == Round::kTrunc,
              kNotImplemented, "round", "rounding ", int(round),
              " is not in Cast.md's int32_t -> float row (RINT, ROUND, FLOOR, CEIL, TRUNC)");
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "only ZEROING is modelled for s32 -> f32");
  Vreg out;
  for (size_t i = 0; i < kVregBytes / sizeof(int32_t); ++i)
    if (active(mask, i, Width::kB32)) out.set<float>(i, s32_to_f32(src.get<int32_t>(i), round));
  dst = out;
}

void VectorCore::vcvt_f322f16(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Sat sat, Part part,
                              Merge merge) const {
  DGA_REQUIRE(round == Round::kRint, kNotImplemented, "round", "only CAST_RINT is modelled for f32 -> f16");
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "only ZEROING is modelled for f32 -> f16");
  const bool saturate = saturating(sat);
  narrow_to_b16(dst, src, mask, part, [&](float x) { return to_f16(x, saturate); });
}

}  // namespace deepgemm_ascend::npu_model
