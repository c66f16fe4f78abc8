// Power-of-two scales folded into the widening (layout/scale_fold.hpp, host/scale_fold.hpp): which scales fold,
// and the folded L0 tiles equal the unfolded ones times their scales, exactly, on every ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/arch/arch.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/layout/scale_fold.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/host/core.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/primitives.hpp"

namespace dga = deepgemm_ascend;
namespace tile = dga::tile;
namespace layout = dga::layout;

namespace scale_fold_test {

using tile::OperandFormat;

// Loads a rows x 96 tile of every code of `fmt` with and without folding (K block of 32, scales 2^e varying by row
// and block, from k_off 32) and checks folded == unfolded * scale for every value, bit for bit.
void expect_folded_loads(OperandFormat fmt) {
  constexpr int64_t kRows = 40, kCols = 160, kOff = 32, kK = 96, kGranK = 32;
  const int bits = tile::operand_bits(fmt);
  std::vector<uint8_t> codes(size_t(kRows * kCols * bits / 8));
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = uint8_t(i * 7 + 3);
  const layout::MatrixRef src{.base = codes.data(), .origin = 0, .rows = kRows, .cols = kCols, .row_stride = kCols,
                              .col_stride = 1, .bits = bits};
  const int64_t blocks = kCols / kGranK;
  std::vector<float> sf(size_t(kRows * blocks));
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t b = 0; b < blocks; ++b) sf[size_t(r * blocks + b)] = std::ldexp(1.0f, int((r * 37 + b * 53) % 201) - 100);
  layout::ScaleRef s{};
  s.base = sf.data(), s.mn_stride = blocks, s.k_stride = 1, s.gran_mn = 1, s.gran_k = kGranK;
  ASSERT_TRUE(layout::all_scales_fold(s, kRows, kCols));

  tile::host::Core core{tile::host::BufferSpec::of<dga::arch::Host>()};
  core.begin_kernel("scale_fold", 0, 1, true);
  const auto g = layout::NzGeometry::fit(kRows, kCols, bits);
  const tile::L0BGeometry l0b_g{kK, layout::align_up(kRows, 16)};
  const int64_t l0a_values = g.rows_pad * kK;
  for (bool b_side : {false, true}) {
    const tile::host::BufferScope scope(core);
    const tile::host::LocalTile l1 = core.alloc(tile::Pos::kL1, uint32_t(g.bytes()), "l1");
    const tile::Pos pos = b_side ? tile::Pos::kL0B : tile::Pos::kL0A;
    const uint32_t bytes = uint32_t(b_side ? l0b_g.bytes(2) : l0a_values * 2);
    const tile::host::LocalTile plain = core.alloc(pos, bytes, "plain"), folded = core.alloc(pos, bytes, "folded");
    const tile::host::FoldScales fold{&s, 0, kRows, kOff};
    if (b_side) {
      tile::host::copy_gm_to_l1b(core, l1, g, src);
      tile::host::load_l1_to_l0b(core, plain, l0b_g, l1, g, kOff, fmt);
      tile::host::load_l1_to_l0b(core, folded, l0b_g, l1, g, kOff, fmt, fold);
    } else {
      tile::host::copy_gm_to_l1(core, l1, g, src);
      tile::host::load_l1_to_l0a(core, plain, l1, g, kOff, kK, fmt);
      tile::host::load_l1_to_l0a(core, folded, l1, g, kOff, kK, fmt, fold);
    }
    // Each value's row and K column from its position in the L0 format, then its scale.
    const auto* p = plain.as<const uint16_t>();
    const auto* f = folded.as<const uint16_t>();
    for (int64_t n = 0; n < kRows; ++n)
      for (int64_t k = 0; k < kK; ++k) {
        int64_t i;
        if (b_side) {
          i = l0b_g.offset(k, n);
        } else {
          const auto fr = tile::host::l0a_fractal(k / 16, g.rows_pad, kK, tile::host::l0a_k_group());
          i = fr.offset + n * fr.row_stride + k % 16;
        }
        const float want = dga::core::bf16_to_float(p[i]) * sf[size_t(n * blocks + (kOff + k) / kGranK)];
        const float got = dga::core::bf16_to_float(f[i]);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got)) << (b_side ? "L0B" : "L0A") << " row " << n << " k " << k;
        } else {
          ASSERT_EQ(std::memcmp(&want, &got, sizeof got), 0) << (b_side ? "L0B" : "L0A") << " row " << n << " k " << k
                                                             << ": " << got << " vs " << want;
        }
      }
  }
  core.end_kernel();
}

}  // namespace scale_fold_test

TEST(ScaleFold, OnlyExactPowersOfTwoWithinTheWindowFold) {
  EXPECT_EQ(layout::fold_exponent(1.0f), 0);
  EXPECT_EQ(layout::fold_exponent(0.25f), -2);
  EXPECT_EQ(layout::fold_exponent(std::ldexp(1.0f, layout::kMaxFoldExponent)), layout::kMaxFoldExponent);
  EXPECT_EQ(layout::fold_exponent(std::ldexp(1.0f, -layout::kMaxFoldExponent)), -layout::kMaxFoldExponent);
  for (float s : {0.0f, -1.0f, 3.0f, 1.5f, std::ldexp(1.0f, layout::kMaxFoldExponent + 1),
                  std::ldexp(1.0f, -layout::kMaxFoldExponent - 1), NAN, INFINITY, 1e-45f})
    EXPECT_EQ(layout::fold_exponent(s), layout::kNotFoldable) << s;
  // A UE8M0 code's step is its value's (the L0 loads take it straight from the code).
  for (int c = 0; c < 256; ++c)
    EXPECT_EQ(layout::fold_step_code(uint8_t(c)), layout::fold_step(layout::ScaleRef::exp2_code(uint8_t(c)))) << c;
}

TEST(ScaleFold, FoldedLoadsAreTheLoadsTimesTheirScalesOnEveryIsa) {
  for (auto isa : dga::tile::host::supported_host_isas()) {
    SCOPED_TRACE(dga::tile::host::name(isa));
    dga::tile::host::set_host_isa(isa);
    using F = tile::OperandFormat;
    for (auto fmt : {F::kE4M3, F::kE5M2, F::kE2M1}) scale_fold_test::expect_folded_loads(fmt);
  }
  dga::tile::host::reset_host_isa();
}

// all_scales_fold reads UE8M0 codes as stored (pack 1, 2 or 4 K blocks per element, gran_mn rows per scale row,
// K-major or MN-major elements) and agrees with fold_exponent on every code at every position; codes beyond the
// operand's K blocks or rows are not read.
TEST(ScaleFold, Ue8m0ScansAgreeWithFoldExponentOnEveryCode) {
  constexpr int64_t kScaleRows = 3, kGranMn = 2, kGranK = 32, kBlocks = 5, kK = kBlocks * kGranK - 7;
  constexpr uint8_t kOne = layout::ScaleRef::kBias, kUnread = 0;
  for (bool mn_major : {false, true}) {
    for (int pack : {1, 2, 4}) {
      // One spare element per row and one spare row, both unread.
      const int64_t elems = (kBlocks + pack - 1) / pack + 1, rows = kScaleRows + 1;
      const int64_t mn_stride = mn_major ? pack : elems * pack, k_stride = mn_major ? rows * pack : pack;
      std::vector<uint8_t> codes(size_t(rows * elems * pack), kUnread);
      const auto at = [&](int64_t r, int64_t kb) -> uint8_t& {
        return codes[size_t(r * mn_stride + (kb / pack) * k_stride + kb % pack)];
      };
      for (int64_t r = 0; r < kScaleRows; ++r)
        for (int64_t kb = 0; kb < kBlocks; ++kb) at(r, kb) = kOne;
      const layout::ScaleRef s{.base = codes.data(), .ue8m0 = true, .pack = pack, .mn_stride = mn_stride,
                               .k_stride = k_stride, .gran_mn = kGranMn, .gran_k = kGranK};
      ASSERT_TRUE(layout::all_scales_fold(s, kScaleRows * kGranMn, kK)) << "pack " << pack << " mn " << mn_major;
      for (int code = 0; code < 256; ++code) {
        uint8_t& c = at(code % kScaleRows, code % kBlocks);
        c = uint8_t(code);
        const bool want = layout::fold_exponent(layout::ScaleRef::exp2_code(uint8_t(code))) != layout::kNotFoldable;
        EXPECT_EQ(layout::all_scales_fold(s, kScaleRows * kGranMn, kK), want)
            << "pack " << pack << " mn " << mn_major << " code " << code;
        c = kOne;
      }
    }
  }
}

// fp32 scales, K-contiguous rows (the branch-free scan) and strided ones: all_scales_fold agrees with
// fold_exponent on powers of two at and beyond the window's edges and on every kind of value that does not fold.
TEST(ScaleFold, Fp32ScansAgreeWithFoldExponent) {
  constexpr int64_t kRows = 3, kBlocks = 6, kGranK = 128;
  const int e = layout::kMaxFoldExponent;
  const float values[] = {1.0f, std::ldexp(1.0f, e), std::ldexp(1.0f, -e), std::ldexp(1.0f, e + 1),
                          std::ldexp(1.0f, -e - 1), std::ldexp(1.0f, 127), std::ldexp(1.0f, -149), 0.0f, -0.0f,
                          -2.0f, 1.5f, 3.0f, NAN, -NAN, INFINITY, -INFINITY, 0x1.000002p0f};
  for (bool contiguous : {true, false}) {
    // [rows][blocks] with k_stride 1, or [blocks][rows] (MN-major) with k_stride kRows
    std::vector<float> sf(size_t(kRows * kBlocks), 0.5f);
    const layout::ScaleRef s{.base = sf.data(), .ue8m0 = false, .pack = 1, .mn_stride = contiguous ? kBlocks : 1,
                             .k_stride = contiguous ? 1 : kRows, .gran_mn = 1, .gran_k = kGranK};
    for (float v : values)
      for (int64_t at = 0; at < kRows * kBlocks; at += 5) {
        const int64_t r = at / kBlocks, kb = at % kBlocks;
        float& x = sf[size_t(contiguous ? r * kBlocks + kb : kb * kRows + r)];
        x = v;
        EXPECT_EQ(layout::all_scales_fold(s, kRows, kBlocks * kGranK), layout::fold_exponent(v) != layout::kNotFoldable)
            << v << (contiguous ? " contiguous" : " strided") << " at " << r << ", " << kb;
        x = 0.5f;
      }
  }
}
