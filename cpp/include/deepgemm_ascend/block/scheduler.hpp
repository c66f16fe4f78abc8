// The order of a GEMM's output tiles: GemmScheduler maps a linear tile index onto (m, n) tile coordinates
// in serpentine bands, so that consecutive tiles of a core (and neighbouring cores) share A rows or B
// columns in cache / L2; TileWalk deals the tiles of a list of problems to the blocks (the cube cores and,
// of a mix kernel, the vector cores, which must walk the cube's order); vector_core_rows splits a tile's
// rows between the two vector cores of a cube core.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/macros.hpp"
#include "deepgemm_ascend/kernel/tiling.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"

namespace deepgemm_ascend::block {

struct TileCoord {
  int64_t m = 0;  // tile row index
  int64_t n = 0;  // tile column index
};

// One output tile: its first row and column, its size, and the L0C geometry that holds it.
struct TileSpan {
  int64_t m0, n0, rows, cols;
  tile::L0CGeometry c_g;
};

// Tiles of a list of problems are numbered problem after problem and dealt round-robin to the
// blocks: the first tile of block `block` in a problem whose tiles start at global index `first`.
DGA_DEVICE int64_t first_tile_of_block(int64_t first, int64_t block, int64_t blocks) {
  return (block - first % blocks + blocks) % blocks;
}

// Rows [begin, end) of `count` that block `block` of `blocks` takes: contiguous, as even as possible.
struct RowRange {
  int64_t begin, end;
};
DGA_DEVICE RowRange contiguous_share(int64_t count, int64_t block, int64_t blocks) {
  const int64_t per = (count + blocks - 1) / blocks;
  const int64_t b = per * block < count ? per * block : count;
  return {b, b + per < count ? b + per : count};
}

class GemmScheduler {
 public:
  DGA_DEVICE GemmScheduler(int64_t m, int64_t n, int64_t block_m, int64_t block_n, kernel::Swizzle s)
      : m_(m), n_(n), block_m_(block_m), block_n_(block_n), m_tiles_(layout::ceil_div(m, block_m)),
        n_tiles_(layout::ceil_div(n, block_n)), swizzle_(s) {}

  DGA_DEVICE int64_t num_tiles() const { return m_tiles_ * n_tiles_; }

  DGA_DEVICE TileCoord tile(int64_t t) const {
    // Walk bands of `band` rows along the major direction; odd bands run the other way.
    const int64_t major = swizzle_.along_m ? m_tiles_ : n_tiles_;
    const int64_t minor = swizzle_.along_m ? n_tiles_ : m_tiles_;
    const int64_t band = swizzle_.band > 0 ? swizzle_.band : 1;
    const int64_t b = t / (band * minor);
    const int64_t in = t % (band * minor);
    const int64_t rows = (major - b * band) < band ? (major - b * band) : band;
    int64_t i = b * band + in % rows;
    int64_t j = in / rows;
    if (b % 2) j = minor - 1 - j;
    return swizzle_.along_m ? TileCoord{i, j} : TileCoord{j, i};
  }

  DGA_DEVICE TileSpan span(int64_t t) const {
    const TileCoord tc = tile(t);
    const int64_t m0 = tc.m * block_m_, n0 = tc.n * block_n_;
    const int64_t rows = m_ - m0 < block_m_ ? m_ - m0 : block_m_, cols = n_ - n0 < block_n_ ? n_ - n0 : block_n_;
    return {.m0 = m0, .n0 = n0, .rows = rows, .cols = cols,
            .c_g = {layout::align_up(rows, tile::kCubeBlock), layout::align_up(cols, tile::kCubeBlock)}};
  }

 private:
  int64_t m_, n_, block_m_, block_n_;
  int64_t m_tiles_, n_tiles_;
  kernel::Swizzle swizzle_;
};

// The tiles of a list of problems one block (of `blocks`) computes, in the order every side of a kernel
// walks them: per problem, begin(m, n), then span() while more(), next().
//   for (p...) for (walk.begin(m_p, n_p); walk.more(); walk.next()) use(walk.span());
class TileWalk {
 public:
  DGA_DEVICE TileWalk(int64_t block_m, int64_t block_n, kernel::Swizzle s, int64_t block, int64_t blocks)
      : block_m_(block_m), block_n_(block_n), swizzle_(s), block_(block), blocks_(blocks),
        sched_(0, 0, block_m, block_n, s) {}

  // Starts the next problem, of m x n outputs (the tiles of the previous one are counted before it).
  DGA_DEVICE void begin(int64_t m, int64_t n) {
    first_ += sched_.num_tiles();
    sched_ = GemmScheduler(m, n, block_m_, block_n_, swizzle_);
    i_ = first_tile_of_block(first_, block_, blocks_);
  }
  DGA_DEVICE bool more() const { return i_ < sched_.num_tiles(); }
  DGA_DEVICE void next() { i_ += blocks_; }
  DGA_DEVICE TileSpan span() const { return sched_.span(i_); }

 private:
  int64_t block_m_, block_n_;
  kernel::Swizzle swizzle_;
  int64_t block_, blocks_;
  GemmScheduler sched_;
  int64_t first_ = 0;  // global index of the current problem's first tile
  int64_t i_ = 0;      // the current tile, in the problem
};

// Rows of a tile of `rows` that vector core `sub` (0 or 1) of its cube core receives, relative to the
// tile's first row (arch::vector_split_rows).
DGA_HOST_DEVICE constexpr RowRange vector_core_rows(int64_t rows, int64_t sub) {
  const int64_t half = arch::vector_split_rows(rows), begin = sub * half;
  return {begin, begin + layout::imax(layout::imin(rows - begin, half), 0)};
}

}  // namespace deepgemm_ascend::block
