// bf16 L0 tiles left in L1 by unchecked runs (host/l0_views.hpp): the table's rules, and GEMMs that give the
// same bits as checked runs, which copy every L0A and L0B tile.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/host/l0_views.hpp"
#include "reference.hpp"

namespace l0_views_test {

namespace dga = deepgemm_ascend;
using dga::tile::host::L0View;
using dga::tile::host::L0Views;

// Panels of `run` values `panel` apart in `l1`, standing for the tile at `tile`.
L0View view_of(std::vector<uint16_t>& tile, const std::vector<uint16_t>& l1, int64_t first, int64_t panel,
                int64_t run, int64_t panels) {
  return {.tile = reinterpret_cast<std::byte*>(tile.data()), .data = l1.data() + first, .panel = panel, .run = run,
          .panels = panels};
}

std::vector<uint16_t> iota(size_t n, uint16_t from) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint16_t(from + i);
  return v;
}

TEST(L0Views, AViewIsCopiedIntoItsTileOnlyBeforeL1UnderItChangesOrWhenTheTableIsFull) {
  const std::vector<uint16_t> l1 = iota(4096, 1);
  std::vector<std::vector<uint16_t>> tiles(L0Views::kSlots + 1, std::vector<uint16_t>(64, 0));
  auto bytes = [&](int64_t i) { return reinterpret_cast<const std::byte*>(l1.data() + i); };
  L0Views views;
  views.set(view_of(tiles[0], l1, 100, 1000, 32, 2));  // [100, 132) and [1100, 1132)
  EXPECT_EQ(views.find(reinterpret_cast<std::byte*>(tiles[0].data()))->data, l1.data() + 100);
  views.before_write(bytes(0), bytes(100));      // before its first panel: untouched
  views.before_write(bytes(1132), bytes(4096));  // after its last: untouched
  EXPECT_EQ(tiles[0], std::vector<uint16_t>(64, 0));
  ASSERT_NE(views.find(reinterpret_cast<std::byte*>(tiles[0].data())), nullptr);
  views.before_write(bytes(1131), bytes(1132));  // the last value: copied, then gone
  EXPECT_EQ(std::vector<uint16_t>(tiles[0].begin(), tiles[0].begin() + 32), iota(32, 101));
  EXPECT_EQ(std::vector<uint16_t>(tiles[0].begin() + 32, tiles[0].end()), iota(32, 1101));
  EXPECT_EQ(views.find(reinterpret_cast<std::byte*>(tiles[0].data())), nullptr);

  for (int i = 0; i < L0Views::kSlots; ++i) views.set(view_of(tiles[size_t(i)], l1, 64 * i, 64, 64, 1));
  views.set(view_of(tiles[0], l1, 2000, 64, 64, 1));  // the same tile: replaced, nothing copied
  EXPECT_EQ(tiles[1], std::vector<uint16_t>(64, 0));
  views.set(view_of(tiles[L0Views::kSlots], l1, 3000, 64, 64, 1));  // full: the first slot's view is copied
  EXPECT_EQ(tiles[0], iota(64, 2001));
  EXPECT_EQ(views.find(reinterpret_cast<std::byte*>(tiles[0].data())), nullptr);
  views.drop(reinterpret_cast<std::byte*>(tiles[1].data()));  // released: dead, not copied
  EXPECT_EQ(views.find(reinterpret_cast<std::byte*>(tiles[1].data())), nullptr);
  EXPECT_EQ(tiles[1], std::vector<uint16_t>(64, 0));
}

// D (fp32) of one BF16 GEMM in checked or unchecked mode.
std::vector<float> gemm(const std::string& layout, int64_t m, int64_t n, int64_t k, bool checked) {
  auto a = dga_test::random_bf16(size_t(m * k), 5), b = dga_test::random_bf16(size_t(n * k), 6);
  const bool ta = layout[0] == 't', tb = layout[1] == 'n';
  using dga::core::DType;
  // Logical A [m, k] and B [n, k], stored transposed where the layout letter says so.
  auto stored = [](std::vector<uint16_t>& v, int64_t rows, int64_t cols, bool t) {
    return t ? dga_test::view2d(v.data(), DType::kBF16, cols, rows, rows, 1)
             : dga_test::view2d(v.data(), DType::kBF16, rows, cols, cols, 1);
  };
  auto va = stored(a, m, k, ta), vb = stored(b, n, k, tb);
  std::vector<float> d(size_t(m * n), NAN);
  auto vd = dga_test::view2d(d.data(), DType::kFP32, m, n, n, 1);
  dga::runtime::set_checked_mode(checked);
  dga::bf16_gemm(layout, va, vb, vd, nullptr);
  return d;
}

TEST(L0Views, GemmsGiveTheSameBitsAsCheckedRunsThatCopy) {
  const bool was = dga::runtime::checked_mode();
  for (const char* layout : {"nt", "nn", "tn", "tt"})
    for (auto [m, n, k] : {std::tuple{33, 272, 1000}, std::tuple{130, 96, 2100}, std::tuple{1, 40, 48}}) {
      const auto unchecked = gemm(layout, m, n, k, false), checked = gemm(layout, m, n, k, true);
      EXPECT_EQ(std::memcmp(unchecked.data(), checked.data(), unchecked.size() * sizeof(float)), 0)
          << layout << " " << m << "x" << n << "x" << k;
    }
  dga::runtime::set_checked_mode(was);
}

}  // namespace l0_views_test
