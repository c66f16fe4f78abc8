#include "deepgemm_ascend/tile/operand.hpp"

#include <array>

#include "deepgemm_ascend/core/convert.hpp"

namespace deepgemm_ascend::tile {

namespace {

template <int kCodes, class Decode>
std::array<uint16_t, kCodes> make_table(Decode decode) {
  std::array<uint16_t, kCodes> t{};
  for (int c = 0; c < kCodes; ++c) t[size_t(c)] = core::float_to_bf16(decode(uint8_t(c)));
  return t;
}

}  // namespace

const uint16_t* widen_table(OperandFormat f) {
  static const auto e4m3 = make_table<256>(core::e4m3_to_float);
  static const auto e5m2 = make_table<256>(core::e5m2_to_float);
  static const auto e2m1 = make_table<16>(core::e2m1_to_float);
  switch (f) {
    case OperandFormat::kE4M3: return e4m3.data();
    case OperandFormat::kE5M2: return e5m2.data();
    case OperandFormat::kE2M1: return e2m1.data();
    default: return nullptr;
  }
}

}  // namespace deepgemm_ascend::tile
