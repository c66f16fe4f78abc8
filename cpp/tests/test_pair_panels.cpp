// The host's L1 format of B (host/pair_panels.hpp): K-pair panels written from every source layout, bit
// for bit against the layout's definition, on every ISA; and the L0B load from it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "deepgemm_ascend/arch/arch.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/host/core.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/pair_panels.hpp"
#include "deepgemm_ascend/host/primitives.hpp"

namespace dga = deepgemm_ascend;
namespace tile = dga::tile;
namespace layout = dga::layout;

namespace pair_panels_test {

constexpr uint8_t kPoison = 0xA5;

// A strided source matrix of `bits`-bit codes, every value nonzero and telling its position apart.
struct Source {
  std::vector<uint8_t> bytes;
  layout::MatrixRef ref;
  Source(int64_t rows, int64_t cols, int bits, int64_t origin, int64_t row_stride, int64_t col_stride) {
    const int64_t last = origin + (rows - 1) * row_stride + (cols - 1) * col_stride;
    bytes.assign(size_t((last + 1) * bits / 8 + 2), 0xEE);
    ref = {bytes.data(), origin, rows, cols, row_stride, col_stride, bits};
    const layout::MutMatrixRef w{.base = bytes.data(), .origin = origin, .rows = rows, .cols = cols,
                                 .row_stride = row_stride, .col_stride = col_stride, .bits = bits};
    const uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) w.set(r, c, uint32_t(1 + (r * 37 + c * 11) % (mask - 1)) & mask);
  }
};

// The definition: zeros, then value (n, k) at pair_panels(g).offset(k, n).
std::vector<uint8_t> expected(const layout::MatrixRef& src, const layout::NzGeometry& g) {
  std::vector<uint8_t> out(size_t(g.bytes()), 0);
  const tile::L0BGeometry p = tile::host::pair_panels(g);
  for (int64_t n = 0; n < src.rows; ++n)
    for (int64_t k = 0; k < src.cols; ++k) layout::detail::store_code(out.data(), p.offset(k, n), g.bits, src.get(n, k));
  return out;
}

void expect_panels(const Source& s, const layout::NzGeometry& g, const std::string& what) {
  std::vector<uint8_t> got(size_t(g.bytes()), kPoison);
  tile::host::nd_to_pair_panels(s.ref, got.data(), g);
  const std::vector<uint8_t> want = expected(s.ref, g);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(int(got[i]), int(want[i])) << what << ": byte " << i << " of " << want.size();
}

struct Shape {
  int64_t rows, cols;
};
constexpr Shape kShapes[] = {{1, 1}, {1, 2}, {16, 16}, {15, 31}, {16, 64}, {33, 100}, {48, 130}, {17, 257}};

void expect_every_layout() {
  for (int bits : {16, 8, 4})
    for (const Shape& sh : kShapes) {
      const int64_t r = sh.rows, c = sh.cols;
      auto g = layout::NzGeometry::fit(r, c, bits);
      const std::string tag = std::to_string(bits) + "-bit " + std::to_string(r) + "x" + std::to_string(c);
      expect_panels(Source(r, c, bits, 0, c, 1), g, tag + " K-major");
      expect_panels(Source(r, c, bits, 6, c + 10, 1), g, tag + " K-major, padded rows");
      expect_panels(Source(r, c, bits, 3, c + 7, 1), g, tag + " K-major, odd origin");
      expect_panels(Source(r, c, bits, 0, 1, r + 4), g, tag + " MN-major");
      expect_panels(Source(r, c, bits, 2, 3 * c, 2), g, tag + " strided");
      g.cols_pad += 2 * g.c0();  // a wider stage than the source (the other operand's K padding)
      g.rows_pad += 16;
      expect_panels(Source(r, c, bits, 0, c, 1), g, tag + " K-major, wider tile");
      expect_panels(Source(r, c, bits, 0, 1, r), g, tag + " MN-major, wider tile");
    }
}

}  // namespace pair_panels_test



TEST(PairPanels, EveryLayoutMatchesTheDefinitionOnEveryIsa) {
  for (auto isa : dga::tile::host::supported_host_isas()) {
    SCOPED_TRACE(dga::tile::host::name(isa));
    dga::tile::host::set_host_isa(isa);
    pair_panels_test::expect_every_layout();
  }
  dga::tile::host::reset_host_isa();
}

// copy_gm_to_l1b then load_l1_to_l0b of a K range: L0B holds the codes of that range, widened, in the cube's
// B format (cube_format.hpp), for every operand format.
TEST(PairPanels, L0BLoadIsTheWidenedKRangeInTheCubeFormat) {
  using tile::OperandFormat;
  tile::host::Core core{tile::host::BufferSpec::of<dga::arch::Host>()};
  core.begin_kernel("pair_panels_load", 0, 1, true);
  constexpr int64_t kRows = 40, kCols = 200, kOff = 64, kK = 96;
  for (auto fmt : {OperandFormat::kBF16, OperandFormat::kE4M3, OperandFormat::kE5M2, OperandFormat::kE2M1}) {
    const int bits = tile::operand_bits(fmt);
    const pair_panels_test::Source s(kRows, kCols, bits, 0, kCols, 1);
    const auto g = layout::NzGeometry::fit(kRows, kCols, bits);
    const tile::L0BGeometry l0_g{kK, layout::align_up(kRows, 16)};
    const tile::host::BufferScope scope(core);
    const tile::host::LocalTile l1 = core.alloc(tile::Pos::kL1, uint32_t(g.bytes()), "l1");
    const tile::host::LocalTile l0b = core.alloc(tile::Pos::kL0B, uint32_t(l0_g.bytes(2)), "l0b");
    std::memset(l0b.addr, pair_panels_test::kPoison, l0b.bytes);
    tile::host::copy_gm_to_l1b(core, l1, g, s.ref);
    tile::host::load_l1_to_l0b(core, l0b, l0_g, l1, g, kOff, fmt);
    const uint16_t* table = fmt == OperandFormat::kBF16 ? nullptr : tile::host::widened_codes(fmt);
    const auto* got = l0b.as<const uint16_t>();
    for (int64_t n = 0; n < l0_g.n_pad; ++n)
      for (int64_t k = 0; k < kK; ++k) {
        const uint32_t code = n < kRows ? s.ref.get(n, kOff + k) : 0;
        const uint16_t want = table ? table[code] : uint16_t(code);
        ASSERT_EQ(got[l0_g.offset(k, n)], want) << "format " << bits << "-bit, n " << n << ", k " << k;
      }
  }
  core.end_kernel();
}
