// The facts the cube and vector sides of a kernel share: the tile walk deals every tile of a list of
// problems to exactly one block, round robin across problems; the row split gives each row of a tile to
// exactly one vector core; the carving is what BlockMmad allocates.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/kernel/tiling.hpp"

namespace tile_walk_test {

namespace dga = deepgemm_ascend;

struct Problem {
  int64_t m, n;
};

TEST(TileWalk, EveryTileOnceRoundRobinAcrossProblems) {
  const std::vector<Problem> problems = {{100, 70}, {0, 64}, {16, 16}, {129, 300}};
  for (const bool along_m : {true, false}) {
    for (const int64_t blocks : {1, 3, 7}) {
      std::map<std::pair<int64_t, std::pair<int64_t, int64_t>>, int> seen;  // (problem, (m0, n0)) -> block
      int64_t total = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        dga::block::TileWalk walk(32, 64, {2, along_m}, b, blocks);
        int64_t global = 0;  // the tile's index over all problems, for the round robin
        for (size_t p = 0; p < problems.size(); ++p) {
          const dga::block::GemmScheduler sched(problems[p].m, problems[p].n, 32, 64, {2, along_m});
          for (walk.begin(problems[p].m, problems[p].n); walk.more(); walk.next(), ++total) {
            const dga::block::TileSpan sp = walk.span();
            // The block's tiles of this problem are its indices congruent to b in the global numbering.
            int64_t i = 0;
            while (i < sched.num_tiles() && (sched.span(i).m0 != sp.m0 || sched.span(i).n0 != sp.n0)) ++i;
            ASSERT_LT(i, sched.num_tiles());
            EXPECT_EQ((global + i) % blocks, b);
            EXPECT_TRUE(seen.emplace(std::pair{int64_t(p), std::pair{sp.m0, sp.n0}}, int(b)).second);
          }
          global += sched.num_tiles();
        }
      }
      EXPECT_EQ(total, 4 * 2 + 0 + 1 * 1 + 5 * 5);
    }
  }
}

TEST(VectorCoreRows, SplitEveryRowOnceFirstHalfRoundedUp) {
  for (int64_t rows = 0; rows <= 33; ++rows) {
    const dga::block::RowRange a = dga::block::vector_core_rows(rows, 0), b = dga::block::vector_core_rows(rows, 1);
    EXPECT_EQ(a.begin, 0);
    EXPECT_EQ(a.end - a.begin, (rows + 1) / 2);
    EXPECT_EQ(b.begin, a.end);
    EXPECT_EQ(b.end, rows);
  }
}

TEST(Carving, HandComputedMxTilingAndItsFit) {
  using T = dga::kernel::StaticTiling<128, 256, 256, 128>;
  constexpr dga::kernel::Carving c = dga::kernel::carving(T{}, {8, 8, 8, 8, true});
  // Per 16 rows one 32 B unit of scales per 64 values of K.
  static_assert(c.l1_a == 128 * 256 && c.l1_b == 256 * 256 && c.l1_sa == 8 * 4 * 32 && c.l1_sb == 16 * 4 * 32);
  static_assert(c.l0a == 128 * 128 && c.l0b == 256 * 128 && c.l0c == 128 * 256 * 4);
  static_assert(c.l1_total() == 2 * (128 * 256 + 256 * 256 + (8 + 16) * 4 * 32));
  static_assert(dga::kernel::tiling_fits<dga::arch::Ascend950, T, 8, 8, 8, true>());
  // Tails are padded to whole fractals: 17 rows take two.
  EXPECT_EQ(dga::kernel::carving(dga::kernel::GemmTiling{17, 16, 64, 64}, {}).l1_a, 32 * 64 * 2);
}

}  // namespace tile_walk_test
