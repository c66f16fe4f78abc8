// The UE8M0 value check of scale factors (layout/ue8m0_values.hpp) and the rows of a psum layout.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/layout/ue8m0_values.hpp"
#include "reference.hpp"

namespace {

namespace core = deepgemm_ascend::core;
namespace layout = deepgemm_ascend::layout;
using core::DType;

// The message of the error `fn` throws (empty if none), after checking it is a ValueError naming `arg`.
template <class Fn>
std::string value_error(Fn fn, const std::string& arg) {
  try {
    fn();
  } catch (const core::Error& e) {
    EXPECT_EQ(int(e.kind()), int(core::ErrorKind::kValue)) << e.what();
    EXPECT_EQ(e.arg(), arg) << e.what();
    return e.what();
  }
  return {};
}

std::vector<float> powers_of_two(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::ldexp(1.0f, int(i % 40) - 20);
  return v;
}

TEST(Ue8m0Values, PowersOfTwoAndZeroPassEveryOtherFloatFails) {
  auto v = powers_of_two(6 * 5);
  v[7] = 0.0f;
  const auto t = dga_test::contiguous(v.data(), DType::kFP32, {6, 5});
  layout::require_ue8m0_values(t, "sfa");
  for (float bad : {0.75f, -2.0f, -0.0f, INFINITY, NAN, 1e-40f /* subnormal */, 3.0f}) {
    auto w = v;
    w[13] = bad;
    w[29] = 5.0f;
    const auto msg = value_error([&] { layout::require_ue8m0_values(dga_test::contiguous(w.data(), DType::kFP32, {6, 5}), "sfa"); },
                                 "sfa");
    EXPECT_NE(msg.find("sfa: 2 of 30 values are not a power of two (first: sfa[2, 3] = "), std::string::npos) << msg;
  }
}

TEST(Ue8m0Values, StridesAndGroupsAreHonoured) {
  // A [2, 3, 4] view with the MN dimension contiguous (column stride 8: padding rows hold garbage, not read).
  std::vector<float> v(2 * 4 * 8, 3.0f);
  for (int g = 0; g < 2; ++g)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) v[size_t(g * 32 + c * 8 + r)] = std::ldexp(1.0f, r - c);
  core::TensorView t = dga_test::contiguous(v.data(), DType::kFP32, {2, 3, 4});
  t.strides[0] = 32, t.strides[1] = 1, t.strides[2] = 8;
  layout::require_ue8m0_values(t, "sfb");
  v[size_t(32 + 2 * 8 + 1)] = 1.5f;  // group 1, row 1, column 2
  EXPECT_NE(value_error([&] { layout::require_ue8m0_values(t, "sfb"); }, "sfb").find("first: sfb[1, 1, 2] = 1.5"),
            std::string::npos);
}

TEST(Ue8m0Values, ExponentBytesRejectOnlyNaN) {
  std::vector<uint8_t> bytes(4 * 6);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 10);  // 0 .. 230
  for (DType dt : {DType::kUInt8, DType::kUE8M0}) {
    const auto t = dga_test::contiguous(bytes.data(), dt, {4, 6});
    layout::require_ue8m0_values(t, "sf");
  }
  bytes[9] = bytes[20] = 0xFF;  // (1, 3) and (3, 2)
  for (DType dt : {DType::kUInt8, DType::kUE8M0}) {
    const auto t = dga_test::contiguous(bytes.data(), dt, {4, 6});
    const auto msg = value_error([&] { layout::require_ue8m0_values(t, "sf"); }, "sf");
    EXPECT_NE(msg.find("sf: 2 of 24 elements hold exponent byte 255 (NaN), which is not a valid scale "
                       "(first: sf[1, 3])"),
              std::string::npos)
        << msg;
  }
  std::vector<int32_t> words(4 * 2, 0x7F7F7F7F);
  layout::require_ue8m0_values(dga_test::contiguous(words.data(), DType::kInt32, {4, 2}), "sf");
  words[5] = 0x7FFF7F7F;  // byte 2 of word (2, 1) is NaN
  const auto msg = value_error([&] { layout::require_ue8m0_values(dga_test::contiguous(words.data(), DType::kInt32, {4, 2}), "sf"); },
                               "sf");
  EXPECT_NE(msg.find("exponent byte 255 (NaN)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sf[2, 1]"), std::string::npos) << msg;
}

TEST(Ue8m0Values, OnlyTheGivenRowsAreChecked) {
  auto v = powers_of_two(10 * 3);
  for (int c = 0; c < 3; ++c) v[size_t(4 * 3 + c)] = NAN;  // row 4: a gap row
  const auto t = dga_test::contiguous(v.data(), DType::kFP32, {10, 3});
  const layout::ScaleRows rows{{{{0, 4}, {5, 10}}}};
  layout::require_ue8m0_values(t, "sfa", &rows);
  EXPECT_NE(value_error([&] { layout::require_ue8m0_values(t, "sfa"); }, "sfa").find("3 of 30"), std::string::npos);
  const layout::ScaleRows past_end{{{{0, 11}}}};
  EXPECT_NE(value_error([&] { layout::require_ue8m0_values(t, "sfa", &past_end); }, "sfa").find("outside"),
            std::string::npos);
}

TEST(Ue8m0Values, MaskedGroupsCheckTheirOwnRowsOnly) {
  // Three groups of 4 rows x 2 K blocks; NaN bytes past each group's count are never an error.
  std::vector<uint8_t> v(3 * 4 * 2, 127);
  const int32_t masked_m[3] = {4, 1, 0};
  for (int r = 1; r < 4; ++r) v[size_t((1 * 4 + r) * 2)] = 0xFF;  // group 1, rows 1-3
  for (int r = 0; r < 4; ++r) v[size_t((2 * 4 + r) * 2 + 1)] = 0xFF;  // group 2, every row
  const auto t = dga_test::contiguous(v.data(), DType::kUInt8, {3, 4, 2});
  const layout::ScaleRows rows = layout::masked_rows(masked_m, 3, 4);
  layout::require_ue8m0_values(t, "sfa", &rows);
  v[size_t((1 * 4 + 0) * 2 + 1)] = 0xFF;  // group 1, row 0: a valid row
  const auto msg = value_error([&] { layout::require_ue8m0_values(t, "sfa", &rows); }, "sfa");
  EXPECT_NE(msg.find("1 of 24"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sfa[1, 0, 1]"), std::string::npos) << msg;
  const int32_t too_many[3] = {9, -2, 4};  // counts clamp to [0, rows]
  const layout::RowRanges all{{0, 4}}, none{};
  const auto clamped = layout::masked_rows(too_many, 3, 4);
  EXPECT_EQ(clamped.groups[0], all);
  EXPECT_EQ(clamped.groups[1], none);
}

TEST(Ue8m0Values, IdRowsAreTheRowsOfAGroup) {
  const int32_t ids[9] = {-1, 0, 0, -1, -1, 2, -1, 1, 1};
  const layout::RowRanges want{{1, 3}, {5, 6}, {7, 9}};
  EXPECT_EQ(layout::id_rows(ids, 9), want);
  EXPECT_TRUE(layout::id_rows(ids, 1).empty());
}

TEST(Ue8m0Values, PsumRowsStartAtAlignedOffsets) {
  const layout::RowRanges want{{0, 40}, {128, 178}, {256, 286}};
  EXPECT_EQ(layout::psum_rows({40, 178, 286}, 300, 128, "grouped_layout"), want);
  const layout::RowRanges empty_middle{{0, 128}, {128, 200}};
  EXPECT_EQ(layout::psum_rows({128, 128, 200}, 200, 128, "grouped_layout"), empty_middle);
  EXPECT_NE(value_error([] { layout::psum_rows({40, 30}, 100, 128, "grouped_layout"); }, "grouped_layout")
                .find("out of order"),
            std::string::npos);
  EXPECT_FALSE(value_error([] { layout::psum_rows({40, 301}, 300, 128, "grouped_layout"); }, "grouped_layout").empty());
}

TEST(Ue8m0Values, OtherDtypesAreTypeErrors) {
  std::vector<uint16_t> h(4);
  try {
    layout::require_ue8m0_values(dga_test::contiguous(h.data(), DType::kBF16, {2, 2}), "sfa");
    ADD_FAILURE() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(int(e.kind()), int(core::ErrorKind::kType));
    EXPECT_EQ(e.arg(), "sfa");
  }
}

}  // namespace
