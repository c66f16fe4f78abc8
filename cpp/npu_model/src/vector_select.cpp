// The vector core's micro-ops of an attention epilogue (vector.hpp): vrelu, vmuls / vadds (float), vci
// (int32, float), vcmps_* (int32, float), vsel (b32) and the predicate logic pand / por / pnot.
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"
#include "vector_elementwise.hpp"

namespace deepgemm_ascend::npu_model {

namespace {

// The element index vci writes to element i.
size_t index_of(size_t i, Order order) { return order == Order::kIncrease ? i : kB32Elements - 1 - i; }

template <class T>
bool holds(T x, T y, Cmp cmp) {
  switch (cmp) {
    case Cmp::kEq: return x == y;
    case Cmp::kNe: return x != y;
    case Cmp::kGt: return x > y;
    case Cmp::kGe: return x >= y;
    case Cmp::kLt: return x < y;
    case Cmp::kLe: return x <= y;
  }
  core::fail(core::ErrorKind::kValue, "cmp", "unknown comparison ", int(cmp));
}

}  // namespace

void VectorCore::vrelu(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const {
  unary_f32(dst, src, mask, merge, "Relu", [](float x) { return x >= 0.0f ? x : 0.0f; });
}

// Each lambda is one fp32 operation (its operands and result are stored: no contraction).
void VectorCore::vmuls(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const {
  unary_f32(dst, src, mask, merge, "Muls", [scalar](float x) { return x * scalar; });
}

void VectorCore::vadds(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const {
  unary_f32(dst, src, mask, merge, "Adds", [scalar](float x) { return x + scalar; });
}

void VectorCore::vci_s32(Vreg& dst, int32_t start, Order order) const {
  for (size_t i = 0; i < kB32Elements; ++i)  // unsigned arithmetic: the documented wrap-around
    dst.set<uint32_t>(i, uint32_t(start) + uint32_t(index_of(i, order)));
}

void VectorCore::vci_f32(Vreg& dst, float start, Order order) const {
  for (size_t i = 0; i < kB32Elements; ++i)  // exact in double (|start| < 2^128, k < 64), then one rounding
    dst.set<float>(i, float(double(start) + double(index_of(i, order))));
}

template <class T>
uint16_t VectorCore::compare(const Vreg& src, T scalar, Cmp cmp, uint16_t mask) {
  Pred p;
  for (size_t i = 0; i < kB32Elements; ++i)
    if (active(mask, i, Width::kB32) && holds(src.get<T>(i), scalar, cmp)) p.set(i * size_t(Width::kB32));
  return intern(p);
}

uint16_t VectorCore::vcmps_s32(const Vreg& src, int32_t scalar, Cmp cmp, uint16_t mask) {
  return compare(src, scalar, cmp, mask);
}

uint16_t VectorCore::vcmps_f32(const Vreg& src, float scalar, Cmp cmp, uint16_t mask) {
  return compare(src, scalar, cmp, mask);
}

void VectorCore::vsel_b32(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t sel) const {
  Vreg out;  // dst may be a or b
  for (size_t i = 0; i < kB32Elements; ++i)
    out.set<uint32_t>(i, active(sel, i, Width::kB32) ? a.get<uint32_t>(i) : b.get<uint32_t>(i));
  dst = out;
}

uint16_t VectorCore::pand(uint16_t a, uint16_t b, uint16_t mask) {
  return intern(pred(a) & pred(b) & pred(mask));
}

uint16_t VectorCore::por(uint16_t a, uint16_t b, uint16_t mask) {
  return intern((pred(a) | pred(b)) & pred(mask));
}

uint16_t VectorCore::pnot(uint16_t src, uint16_t mask) { return intern(~pred(src) & pred(mask)); }

}  // namespace deepgemm_ascend::npu_model
