// GEMM configuration heuristics: every selected config must fit the Arch tag's on-chip buffers and
// be well formed; fits() must reject tilings that overflow; byte usage is checked against sizes
// computed by hand here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "deepgemm_ascend/arch/arch.hpp"
#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
namespace h = dga::heuristics;
namespace arch = dga::arch;
using dga_test::cdiv;

namespace {

// Expected on-chip bytes of a tiling (tiles already multiples of 16), written out independently:
// each L1 stage holds an A tile (block_m x block_k) and a B tile (block_n x block_k), each L0 stage
// one block_m x l0_k (A) or block_n x l0_k (B) slice, and L0C one fp32 block_m x block_n accumulator.
h::BufferUsage expected_usage(const h::GemmTiling& t, const h::GemmDesc& d) {
  h::BufferUsage u;
  u.l1 = uint64_t(t.l1_stages) * uint64_t(t.block_m * t.block_k * d.a_bits / 8 + t.block_n * t.block_k * d.b_bits / 8);
  u.l0a = uint64_t(t.l0_stages) * uint64_t(t.block_m * t.l0_k * d.l0_bits / 8);
  u.l0b = uint64_t(t.l0_stages) * uint64_t(t.block_n * t.l0_k * d.l0_bits / 8);
  u.l0c = uint64_t(t.block_m * t.block_n * 4);
  return u;
}

template <class Arch>
bool within(const h::BufferUsage& u) {
  return u.l1 <= Arch::kL1Bytes && u.l0a <= Arch::kL0ABytes && u.l0b <= Arch::kL0BBytes && u.l0c <= Arch::kL0CBytes;
}

std::string str(const h::BufferUsage& u) {
  return "{l1=" + std::to_string(u.l1) + ", l0a=" + std::to_string(u.l0a) + ", l0b=" + std::to_string(u.l0b) +
         ", l0c=" + std::to_string(u.l0c) + "}";
}

bool same(const h::GemmConfig& a, const h::GemmConfig& b) {
  const auto &x = a.tiling, &y = b.tiling;
  return x.block_m == y.block_m && x.block_n == y.block_n && x.block_k == y.block_k && x.l0_k == y.l0_k &&
         x.l1_stages == y.l1_stages && x.l0_stages == y.l0_stages && a.swizzle.band == b.swizzle.band &&
         a.swizzle.along_m == b.swizzle.along_m && a.num_blocks == b.num_blocks;
}

h::GemmDesc desc(int64_t m, int64_t n, int64_t k, int cores, int bits = 16) {
  h::GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a_bits = d.b_bits = d.l0_bits = bits;
  d.d_bytes = bits == 16 ? 4 : 2;
  d.num_cores = cores;
  return d;
}

const int64_t kMs[] = {1, 16, 64, 128, 129, 1024, 4096};
const int64_t kNs[] = {1, 24, 576, 2112, 7168};
const int64_t kKs[] = {16, 128, 2048, 7168};
const int kCores[] = {1, 2, 24, 32};

// Checks every invariant of the selected config for one desc; returns false on the first violation.
template <class Arch>
bool check_selected(const h::GemmDesc& d) {
  const h::GemmConfig c = h::select_gemm_config<Arch>(d);
  const h::GemmTiling& t = c.tiling;
  SCOPED_TRACE(std::string(Arch::kName) + " " + h::to_string(d) + " -> " + h::to_string(c));
  bool ok = true;
  auto expect = [&](bool cond, const char* what) {
    if (!cond) {
      ADD_FAILURE() << what;
      ok = false;
    }
  };
  expect(t.block_m > 0 && t.block_n > 0 && t.block_k > 0 && t.l0_k > 0, "positive tile sizes");
  expect(t.block_m % 16 == 0 && t.block_n % 16 == 0 && t.block_k % 16 == 0 && t.l0_k % 16 == 0,
         "tiles are multiples of 16");
  expect(t.l0_k > 0 && t.block_k % t.l0_k == 0, "block_k % l0_k == 0");
  expect(t.l1_stages >= 1 && t.l0_stages >= 1, "at least one stage");
  const h::BufferUsage u = h::buffer_usage(t, d), want = expected_usage(t, d);
  expect(u.l1 == want.l1 && u.l0a == want.l0a && u.l0b == want.l0b && u.l0c == want.l0c,
         ("buffer_usage " + str(u) + " != hand-computed " + str(want)).c_str());
  expect(within<Arch>(u), ("usage " + str(u) + " exceeds the Arch's buffers").c_str());
  expect(h::fits(t, d, h::ArchLimits::of<Arch>()), "fits() rejects the selected tiling");
  const int64_t tiles = cdiv(std::max<int64_t>(d.m, 1), t.block_m) * cdiv(std::max<int64_t>(d.n, 1), t.block_n);
  expect(c.num_blocks >= 1 && c.num_blocks <= std::min<int64_t>(tiles, d.num_cores), "num_blocks in [1, min(tiles, cores)]");
  expect(c.swizzle.band >= 1, "swizzle band >= 1");
  expect(same(c, h::select_gemm_config<Arch>(d)), "selection is deterministic");
  return ok;
}

template <class Arch>
void check_grid() {
  int failures = 0;
  for (int bits : {16, 8})
    for (int64_t m : kMs)
      for (int64_t n : kNs)
        for (int64_t k : kKs)
          for (int cores : kCores)
            if (!check_selected<Arch>(desc(m, n, k, cores, bits)) && ++failures >= 10) return;
}

TEST(HeuristicsSelect, Ascend950GridIsValid) { check_grid<arch::Ascend950>(); }
TEST(HeuristicsSelect, Ascend910BGridIsValid) { check_grid<arch::Ascend910B>(); }
TEST(HeuristicsSelect, HostGridIsValid) { check_grid<arch::Host>(); }

TEST(HeuristicsSelect, ArchLimitsMirrorTheArchTag) {
  const auto a = h::ArchLimits::of<arch::Ascend910B>();
  EXPECT_EQ(a.l1, arch::Ascend910B::kL1Bytes);
  EXPECT_EQ(a.l0a, arch::Ascend910B::kL0ABytes);
  EXPECT_EQ(a.l0b, arch::Ascend910B::kL0BBytes);
  EXPECT_EQ(a.l0c, arch::Ascend910B::kL0CBytes);
  EXPECT_EQ(std::string(a.name), "Ascend910B");
}

// m = 1 decode: with two cores and n >= 512, the tiles must let both cores work.
template <class Arch>
void check_decode_uses_both_cores() {
  for (int64_t n : {512, 576, 1024, 2112, 4096, 7168})
    for (int64_t k : {128, 2048, 7168})
      for (int bits : {16, 8}) {
        const h::GemmDesc d = desc(1, n, k, 2, bits);
        const h::GemmConfig c = h::select_gemm_config<Arch>(d);
        const int64_t tiles = cdiv(1, c.tiling.block_m) * cdiv(n, c.tiling.block_n);
        EXPECT_GE(tiles, 2) << Arch::kName << " " << h::to_string(d) << " -> " << h::to_string(c);
        EXPECT_EQ(c.num_blocks, 2) << Arch::kName << " " << h::to_string(d) << " -> " << h::to_string(c);
      }
}

TEST(HeuristicsSelect, DecodeShapesUseBothCores) {
  check_decode_uses_both_cores<arch::Ascend950>();
  check_decode_uses_both_cores<arch::Ascend910B>();
  check_decode_uses_both_cores<arch::Host>();
}

TEST(HeuristicsSelect, ToStringMentionsBlockSizes) {
  h::GemmConfig c;
  c.tiling = {.block_m = 48, .block_n = 80, .block_k = 192, .l0_k = 64, .l1_stages = 2, .l0_stages = 2};
  c.num_blocks = 7;
  const std::string s = h::to_string(c);
  for (const char* part : {"48", "80", "192", "64"}) EXPECT_NE(s.find(part), std::string::npos) << s << " lacks " << part;

  const h::GemmConfig sel = h::select_gemm_config<arch::Ascend950>(desc(4096, 7168, 2048, 32));
  const std::string t = h::to_string(sel);
  for (int64_t v : {sel.tiling.block_m, sel.tiling.block_n, sel.tiling.block_k})
    EXPECT_NE(t.find(std::to_string(v)), std::string::npos) << t;
}

// ---- buffer_usage and fits on explicit tilings -----------------------------------------------------

TEST(HeuristicsUsage, HandComputedBf16Tiling) {
  const h::GemmDesc d = desc(4096, 4096, 4096, 1);
  const h::GemmTiling t{.block_m = 128, .block_n = 256, .block_k = 256, .l0_k = 64, .l1_stages = 2, .l0_stages = 2};
  const h::BufferUsage u = h::buffer_usage(t, d);
  EXPECT_EQ(u.l1, uint64_t(2 * (128 * 256 * 2 + 256 * 256 * 2)));  // 384 KiB
  EXPECT_EQ(u.l0a, uint64_t(2 * 128 * 64 * 2));                     // 32 KiB
  EXPECT_EQ(u.l0b, uint64_t(2 * 256 * 64 * 2));                     // 64 KiB: L0B exactly full
  EXPECT_EQ(u.l0c, uint64_t(128 * 256 * 4));                        // 128 KiB: 910B's L0C exactly full
  // Buffers filled exactly to capacity still fit.
  EXPECT_TRUE(h::fits(t, d, h::ArchLimits::of<arch::Ascend950>()));
  EXPECT_TRUE(h::fits(t, d, h::ArchLimits::of<arch::Ascend910B>()));
  // The host's default L0B is a quarter of its default L2.
  EXPECT_EQ(h::fits(t, d, h::ArchLimits::of<arch::Host>()), u.l0b <= arch::Host::kL0BBytes);
}

TEST(HeuristicsUsage, HandComputedFp8TilingAndStages) {
  const h::GemmDesc d = desc(4096, 4096, 4096, 1, 8);
  h::GemmTiling t{.block_m = 256, .block_n = 128, .block_k = 512, .l0_k = 128, .l1_stages = 2, .l0_stages = 2};
  h::BufferUsage u = h::buffer_usage(t, d);
  EXPECT_EQ(u.l1, uint64_t(2 * (256 * 512 + 128 * 512)));
  EXPECT_EQ(u.l0a, uint64_t(2 * 256 * 128));
  EXPECT_EQ(u.l0b, uint64_t(2 * 128 * 128));
  EXPECT_EQ(u.l0c, uint64_t(256 * 128 * 4));
  EXPECT_TRUE(h::fits(t, d, h::ArchLimits::of<arch::Ascend950>()));
  t.l1_stages = 3;
  t.l0_stages = 1;
  u = h::buffer_usage(t, d);
  EXPECT_EQ(u.l1, uint64_t(3 * (256 * 512 + 128 * 512)));
  EXPECT_EQ(u.l0a, uint64_t(256 * 128));
  EXPECT_EQ(u.l0b, uint64_t(128 * 128));
  EXPECT_EQ(u.l0c, uint64_t(256 * 128 * 4));
  // Mixed widths: 16-bit A in L1, 8-bit B, 16-bit operands in L0.
  h::GemmDesc mixed = d;
  mixed.a_bits = 16;
  mixed.l0_bits = 16;
  const h::GemmTiling t2{.block_m = 64, .block_n = 64, .block_k = 128, .l0_k = 64, .l1_stages = 2, .l0_stages = 2};
  u = h::buffer_usage(t2, mixed);
  EXPECT_EQ(u.l1, uint64_t(2 * (64 * 128 * 2 + 64 * 128 * 1)));
  EXPECT_EQ(u.l0a, uint64_t(2 * 64 * 64 * 2));
  EXPECT_EQ(u.l0b, uint64_t(2 * 64 * 64 * 2));
}

TEST(HeuristicsFits, RejectsL0COverflow) {
  const h::GemmDesc d = desc(4096, 4096, 4096, 1);
  const h::GemmTiling t{.block_m = 512, .block_n = 512, .block_k = 64, .l0_k = 64, .l1_stages = 2, .l0_stages = 2};
  ASSERT_GT(expected_usage(t, d).l0c, uint64_t(arch::Host::kL0CBytes));  // 1 MiB > 256 KiB
  EXPECT_FALSE(h::fits(t, d, h::ArchLimits::of<arch::Host>()));
  EXPECT_FALSE(h::fits(t, d, h::ArchLimits::of<arch::Ascend950>()));
  // 256 x 256 fp32 is 256 KiB: fits 950/Host L0C, not 910B's 128 KiB.
  const h::GemmTiling t2{.block_m = 256, .block_n = 256, .block_k = 64, .l0_k = 16, .l1_stages = 2, .l0_stages = 2};
  EXPECT_TRUE(h::fits(t2, d, h::ArchLimits::of<arch::Ascend950>()));
  EXPECT_FALSE(h::fits(t2, d, h::ArchLimits::of<arch::Ascend910B>()));
}

TEST(HeuristicsFits, RejectsL1Overflow) {
  const h::GemmDesc d = desc(4096, 4096, 8192, 1);
  const h::GemmTiling t{.block_m = 128, .block_n = 128, .block_k = 4096, .l0_k = 64, .l1_stages = 2, .l0_stages = 2};
  const h::BufferUsage want = expected_usage(t, d);
  ASSERT_GT(want.l1, uint64_t(arch::Host::kL1Bytes));  // 4 MiB
  ASSERT_LE(want.l0a, uint64_t(arch::Host::kL0ABytes));
  ASSERT_LE(want.l0c, uint64_t(arch::Host::kL0CBytes));
  EXPECT_FALSE(h::fits(t, d, h::ArchLimits::of<arch::Host>()));
  EXPECT_FALSE(h::fits(t, d, h::ArchLimits::of<arch::Ascend950>()));
  EXPECT_FALSE(h::fits(t, d, h::ArchLimits::of<arch::Ascend910B>()));
  // Just over the 950's 512 KiB L1 with three stages of 128 x 256 x 256 bf16 (576 KiB).
  const h::GemmTiling t3{.block_m = 128, .block_n = 256, .block_k = 256, .l0_k = 64, .l1_stages = 3, .l0_stages = 2};
  ASSERT_GT(expected_usage(t3, d).l1, uint64_t(arch::Ascend950::kL1Bytes));
  EXPECT_FALSE(h::fits(t3, d, h::ArchLimits::of<arch::Ascend950>()));
}

TEST(HeuristicsFits, RejectsL0ABOverflowAndBadKSplit) {
  const h::GemmDesc d = desc(4096, 4096, 4096, 1);
  const h::GemmTiling big_a{.block_m = 256, .block_n = 16, .block_k = 512, .l0_k = 512, .l1_stages = 2,
                            .l0_stages = 2};  // L0A 512 KiB
  ASSERT_GT(expected_usage(big_a, d).l0a, uint64_t(arch::Host::kL0ABytes));
  EXPECT_FALSE(h::fits(big_a, d, h::ArchLimits::of<arch::Host>()));
  const h::GemmTiling big_b{.block_m = 16, .block_n = 256, .block_k = 512, .l0_k = 512, .l1_stages = 2,
                            .l0_stages = 2};  // L0B 512 KiB
  ASSERT_GT(expected_usage(big_b, d).l0b, uint64_t(arch::Host::kL0BBytes));
  EXPECT_FALSE(h::fits(big_b, d, h::ArchLimits::of<arch::Host>()));
  const h::GemmTiling bad_split{.block_m = 64, .block_n = 64, .block_k = 96, .l0_k = 64, .l1_stages = 2,
                                .l0_stages = 2};  // block_k not a multiple of l0_k
  EXPECT_FALSE(h::fits(bad_split, d, h::ArchLimits::of<arch::Host>()));
  const h::GemmTiling ok{.block_m = 64, .block_n = 64, .block_k = 128, .l0_k = 64, .l1_stages = 2, .l0_stages = 2};
  EXPECT_TRUE(h::fits(ok, d, h::ArchLimits::of<arch::Host>()));
}

// fits() must never accept a tiling whose hand-computed usage overflows a buffer.
TEST(HeuristicsFits, NeverAcceptsOverflowingTilings) {
  const auto limits = h::ArchLimits::of<arch::Ascend910B>();
  int accepted = 0;
  for (int bits : {16, 8})
    for (int64_t bm : {16, 64, 128, 256, 512})
      for (int64_t bn : {16, 64, 128, 256, 512})
        for (int64_t bk : {64, 256, 1024})
          for (int64_t l0k : {16, 64, 256}) {
            const h::GemmDesc d = desc(4096, 4096, 4096, 1, bits);
            const h::GemmTiling t{.block_m = bm, .block_n = bn, .block_k = bk, .l0_k = l0k, .l1_stages = 2,
                                  .l0_stages = 2};
            const bool f = h::fits(t, d, limits);
            if (f) ++accepted;
            if (f) {
              EXPECT_TRUE(within<arch::Ascend910B>(expected_usage(t, d))) << h::to_string(h::GemmConfig{t, {}, 1});
              EXPECT_EQ(bk % l0k, 0);
            }
          }
  EXPECT_GT(accepted, 0);
}

}  // namespace

// ---- the 950 performance model --------------------------------------------------------------

namespace {
h::GemmDesc npu_desc(int64_t m, int64_t n, int64_t k, int a_bits, int b_bits) {
  return h::npu_gemm_desc(m, n, k, a_bits, b_bits, 2, arch::Ascend950::kDefaultCubeCores);
}
}  // namespace

TEST(PerfModel, OnlyNpuArchsHaveOne) {
  EXPECT_EQ(h::ArchLimits::of<arch::Host>().perf.cores, 0);
  EXPECT_EQ(h::ArchLimits::of<arch::Ascend950>().perf.cores, arch::Ascend950::kDefaultCubeCores);
  EXPECT_NEAR(h::ArchLimits::of<arch::Ascend950>().perf.clock_ghz, 1.65, 1e-9);  // the 950PR READMEs' clock
}

TEST(PerfModel, Ascend950PicksCatlassTilesAndIsCubeBoundOnLargeShapes) {
  const auto lim = h::ArchLimits::of<arch::Ascend950>();
  // BF16: CATLASS example 46 uses L1 256x256x128 and L0 K 64; MX FP8 (example 53): 256x256x256, L0 K 128.
  const auto bf16 = h::select_gemm_config(npu_desc(4096, 7168, 16384, 16, 16), lim).tiling;
  EXPECT_EQ(h::to_string(h::GemmConfig{bf16, {}, 1}).substr(0, 40), "GemmConfig{block=256x256x128, l0_k=64, s");
  const auto fp8 = h::select_gemm_config(npu_desc(4096, 7168, 16384, 8, 8), lim).tiling;
  EXPECT_EQ(fp8.block_m, 256);
  EXPECT_EQ(fp8.block_n, 256);
  EXPECT_EQ(fp8.block_k, 256);
  EXPECT_EQ(fp8.l0_k, 128);
  const auto p16 = h::predict_gemm(npu_desc(4096, 7168, 16384, 16, 16), bf16, lim.perf);
  const auto p8 = h::predict_gemm(npu_desc(4096, 7168, 16384, 8, 8), fp8, lim.perf);
  EXPECT_STREQ(p16.bound, "cube");
  EXPECT_STREQ(p8.bound, "cube");
  EXPECT_GT(p16.tflops, 0.99 * arch::Ascend950::kPeakBf16Tflops);
  EXPECT_LE(p16.tflops, arch::Ascend950::kPeakBf16Tflops);
  EXPECT_GT(p8.tflops, 0.99 * arch::Ascend950::kPeakFp8Tflops);
}

TEST(PerfModel, DecodeShapesAreMemoryBoundAndWavesCount) {
  const auto lim = h::ArchLimits::of<arch::Ascend950>();
  const auto d = npu_desc(128, 7168, 2048, 16, 16);
  const auto p = h::predict_gemm(d, h::select_gemm_config(d, lim).tiling, lim.perf);
  EXPECT_STREQ(p.bound, "hbm");
  EXPECT_LT(p.tflops, 0.7 * arch::Ascend950::kPeakBf16Tflops);
  // One more tile than a whole wave costs a whole extra wave of cube time.
  const h::GemmTiling t{.block_m = 256, .block_n = 256, .block_k = 128, .l0_k = 64, .l1_stages = 2, .l0_stages = 2};
  const auto even = h::predict_gemm(npu_desc(256 * 32, 256, 4096, 16, 16), t, lim.perf);
  const auto odd = h::predict_gemm(npu_desc(256 * 33, 256, 4096, 16, 16), t, lim.perf);
  EXPECT_NEAR(odd.cube_cycles, 2 * even.cube_cycles, 1e-6 * even.cube_cycles);
}

// FP32 block scales: every K block's fp32 product passes the vector cores (3 micro-ops a register, two
// vector cores a cube), which bounds large promoted GEMMs and makes a decode GEMM spread over all cores.
TEST(PerfModel, PromotedGemmsCountTheVectorCoresPasses) {
  const auto lim = h::ArchLimits::of<arch::Ascend950>();
  h::GemmDesc d = npu_desc(4096, 7168, 16384, 8, 8);
  const h::GemmTiling t{.block_m = 128, .block_n = 256, .block_k = 512, .l0_k = 128, .l1_stages = 2, .l0_stages = 2};
  const auto plain = h::predict_gemm(d, t, lim.perf);
  EXPECT_EQ(plain.vector_cycles, 0.0);
  d.promote_k = 128;
  const auto promoted = h::predict_gemm(d, t, lim.perf);
  // 896 tiles: 28 waves of 128 x 256 products of 128 K blocks, 64 x 256 values a vector core, 64 a register.
  EXPECT_NEAR(promoted.vector_cycles, 28.0 * 128 * (64 * 256 / 64) * h::kPromotionOpsPerRegister, 1e-6);
  EXPECT_STREQ(promoted.bound, "vector");
  EXPECT_NEAR(promoted.vector_cycles, 1.5 * promoted.cube_cycles, 1e-6 * promoted.cube_cycles);
  // 64 x 4096 x 7168: HBM-bound at any tile; 64 x 256 tiles would leave half the cores idle with twice the
  // vector work each.
  h::GemmDesc decode = npu_desc(64, 4096, 7168, 8, 8);
  decode.promote_k = 128;
  const h::GemmConfig c = h::select_gemm_config(decode, lim);
  EXPECT_EQ(c.num_blocks, arch::Ascend950::kDefaultCubeCores) << h::to_string(c);
}

// MX operands: L1 also holds the UE8M0 scale pairs of every stage, and K steps are whole scale pairs.
TEST(NpuHeuristics, MxTilesCountTheirScalesAndStepKInScalePairs) {
  const auto lim = h::ArchLimits::of<arch::Ascend950>();
  constexpr int64_t kBaseK = arch::MxFormat::kMxBaseK;
  for (int bits : {8, 4})
    for (int64_t m : {1, 64, 4096}) {
      const h::GemmDesc mx = h::npu_gemm_desc(m, 7168, 2048, bits, bits, 2, arch::Ascend950::kDefaultCubeCores, true);
      const h::GemmTiling t = h::select_gemm_config(mx, lim).tiling;
      EXPECT_EQ(t.block_k % kBaseK, 0) << bits << " " << m;
      EXPECT_EQ(t.l0_k % kBaseK, 0) << bits << " " << m;
      h::GemmDesc plain = mx;
      plain.mx_scales = false;
      // 16 rows x one 16-bit pair per 64 K values per operand row block, per stage.
      const int64_t rows = cdiv(t.block_m, 16) * 16 + cdiv(t.block_n, 16) * 16;
      EXPECT_EQ(h::buffer_usage(t, mx).l1 - h::buffer_usage(t, plain).l1,
                uint64_t(t.l1_stages * rows * (t.block_k / kBaseK) * 2));
      EXPECT_TRUE(h::fits(t, mx, lim));
    }
  // A tile whose K step is not a whole scale pair is rejected for MX only.
  const h::GemmTiling odd{.block_m = 128, .block_n = 128, .block_k = 128, .l0_k = 32};
  h::GemmDesc mx = h::npu_gemm_desc(256, 256, 256, 8, 8, 2, 1, true);
  EXPECT_FALSE(h::fits(odd, mx, lim));
  mx.mx_scales = false;
  EXPECT_TRUE(h::fits(odd, mx, lim));
  // The compile-time check of JIT tilings counts the scales and the operand width in L0 the same way.
  using Fp8 = h::StaticTiling<256, 256, 256, 128>;
  static_assert(h::tiling_fits<arch::Ascend950, Fp8, 8, 8, 8, true>());
  static_assert(!h::tiling_fits<arch::Ascend950, Fp8, 8, 8, 16, true>(), "16-bit L0 tiles overflow L0A");
}

// A promoted NPU GEMM keeps its tile within the vector cores' UB (max_tile_values) and its L0 K step
// equal to the promoted K block.
TEST(NpuHeuristics, PromotedTilesFitTheVectorCoresAndStepKByTheBlock) {
  const auto lim = h::ArchLimits::of<arch::Ascend950>();
  for (int64_t m : {1, 200, 4096}) {
    h::GemmDesc d = h::npu_gemm_desc(m, 7168, 7168, 8, 8, 2, arch::Ascend950::kDefaultCubeCores);
    d.promote_k = 128;
    d.max_tile_values = 128 * 256;
    const h::GemmTiling t = h::select_gemm_config(d, lim).tiling;
    EXPECT_LE(t.block_m * t.block_n, d.max_tile_values) << m;
    EXPECT_EQ(t.l0_k, 128) << m;
    EXPECT_FALSE(h::fits({.block_m = 256, .block_n = 256, .block_k = 256, .l0_k = 128}, d, lim));
    d.max_tile_values = 0;
    EXPECT_TRUE(h::fits({.block_m = 256, .block_n = 256, .block_k = 256, .l0_k = 128}, d, lim));
  }
}
