#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <sstream>
#include <vector>

#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/arch/cube_format.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"

namespace deepgemm_ascend::heuristics {

using layout::align_up;
using layout::ceil_div;
using layout::kFractalRows;

namespace {
constexpr int64_t kBlockMN[] = {16, 32, 64, 128, 256, 512};  // up to ArchLimits::max_block_mn
constexpr int64_t kLargestMultiple = 256;  // set_block_size_multiple_of's range (upstream's block sizes)
constexpr int64_t kBlockK[] = {64, 128, 256, 512};
constexpr int64_t kL0K[] = {16, 32, 64, 128, 256, 512};
using core::kFp32Bytes;
constexpr double kModelTie = 0.01;  // predicted times closer than 1 % are a tie
}  // namespace

BufferUsage buffer_usage(const GemmTiling& t, const GemmDesc& d) {
  // The kernel's own carving (BlockMmad carves its buffers by it), with both L0 operands at l0_bits.
  const kernel::Carving c = kernel::carving(t, {d.a_bits, d.b_bits, d.l0_bits, d.l0_bits, d.mx_scales, d.second_b});
  return {uint64_t(c.l1_total()), uint64_t(c.l0a_total()), uint64_t(c.l0b_total()), uint64_t(c.l0c)};
}

namespace {
std::atomic<int64_t> g_block_m_multiple{1}, g_block_n_multiple{1};
}  // namespace

void set_block_size_multiple_of(int64_t m, int64_t n) {
  constexpr int64_t kLargest = kLargestMultiple;
  for (const auto& [v, arg] : {std::pair{m, "block_m"}, std::pair{n, "block_n"}})
    DGA_REQUIRE(v >= 1 && v <= kLargest && (v & (v - 1)) == 0, kValue, "new_value", "the ", arg,
                " multiple must be a power of two in [1, ", kLargest, "] (the tile sizes are), got ", v);
  g_block_m_multiple = m;
  g_block_n_multiple = n;
}

std::pair<int64_t, int64_t> block_size_multiple_of() { return {g_block_m_multiple.load(), g_block_n_multiple.load()}; }

bool fits(const GemmTiling& t, const GemmDesc& d, const ArchLimits& arch) {
  if (t.block_m % g_block_m_multiple.load() != 0 || t.block_n % g_block_n_multiple.load() != 0) return false;
  if (t.block_m > arch.mmad_max_dim || t.block_n > arch.mmad_max_dim || t.l0_k > arch.mmad_max_dim) return false;
  if (t.block_m > arch.max_block_mn || t.block_n > arch.max_block_mn || t.block_k > arch.max_block_k) return false;
  if (t.block_k % t.l0_k != 0) return false;
  if (d.promote_k > 0 && t.l0_k != d.promote_k) return false;
  if (d.max_tile_values > 0 && t.block_m * t.block_n > d.max_tile_values) return false;
  if (d.mx_scales && (t.l0_k % arch::MxFormat::kMxBaseK != 0 || t.block_k % arch::MxFormat::kMxBaseK != 0)) return false;
  if (t.block_m % std::max<int64_t>(d.m_multiple, 1) != 0) return false;
  const BufferUsage u = buffer_usage(t, d);
  // Each stage of a ring starts aligned; count the worst-case padding per stage.
  const uint64_t l1_pad = uint64_t(t.l1_stages) * arch.l1_align;
  return u.l1 + l1_pad <= arch.l1 && u.l0a <= arch.l0a && u.l0b <= arch.l0b && u.l0c <= arch.l0c;
}

GemmDesc npu_gemm_desc(int64_t m, int64_t n, int64_t k, int a_bits, int b_bits, int d_bytes, int cores, bool mx) {
  GemmDesc d;
  d.mx_scales = mx;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a_bits = a_bits;
  d.b_bits = b_bits;
  d.l0_bits = std::max(a_bits, b_bits);
  d.d_bytes = d_bytes;
  d.num_cores = cores;
  return d;
}

namespace {

// A config's score: `time`, one core's share (NPU archs: the predicted seconds; otherwise in units of "FLOP at
// peak": waves x per-tile roofline cost), and `work`, a promoted NPU GEMM's predicted cycles a core (0
// otherwise: ties then go by tile size alone).
struct Score {
  double time = 0.0, work = 0.0;
};

Score score(const GemmTiling& t, const GemmDesc& d, const ArchLimits& arch) {
  if (arch.perf.cores > 0) {
    const Prediction p = predict_gemm(d, t, arch.perf);
    return {p.seconds, d.promote_k > 0 ? p.per_core_cycles : 0.0};
  }
  const int64_t m_tiles = ceil_div(d.m, t.block_m), n_tiles = ceil_div(d.n, t.block_n);
  const int64_t waves = ceil_div(m_tiles * n_tiles, std::max(1, d.num_cores));
  const int64_t bm = align_up(std::min(t.block_m, align_up(d.m, kFractalRows)), kFractalRows);
  const int64_t bn = align_up(std::min(t.block_n, align_up(d.n, kFractalRows)), kFractalRows);
  const double k = double(align_up(d.k, kFractalRows));
  const double flops = 2.0 * double(bm) * double(bn) * k;
  // Operands once, D once, and (host) the fp32 accumulator read and written once per L0 K step.
  const double l0_steps = arch.accumulator_traffic_per_l0_step ? std::ceil(k / double(t.l0_k)) : 1.0;
  const double bytes = (double(bm) * d.a_bits + double(bn) * d.b_bits) / 8.0 * k + double(bm * bn) * d.d_bytes +
                       double(bm * bn) * 2 * kFp32Bytes * (l0_steps - 1);
  // Narrow operands are widened once per tile that loads them: B once per m tile, A once per n tile.
  const double widened = (double(bm) * (d.a_bits < d.l0_bits) + double(bn) * (d.b_bits < d.l0_bits)) * k;
  const double copy = bytes * arch.ridge_flops_per_byte + widened * arch.widen_flops_per_value;
  return {double(waves) * (arch.copies_overlap_compute ? std::max(flops, copy) : flops + copy), 0.0};
}

}  // namespace

namespace {

// The block sizes tried along a dimension of `extent` values: the powers of two, and on archs with a
// performance model (the NPU: any multiple of 16 runs) the sizes that cut the extent into t nearly equal
// tiles, so that a row or column of tiles can fill the cores exactly (7168 = 32 x 224). Not for promoted
// GEMMs: the roofline counts their vector cores' passes over the products, not the per-row work that grows
// with the scale runs a tile cuts.
// Ascending.
std::vector<int64_t> block_candidates(int64_t extent, const GemmDesc& d, const ArchLimits& arch) {
  std::vector<int64_t> out(std::begin(kBlockMN), std::end(kBlockMN));
  if (arch.perf.cores > 0 && d.promote_k == 0)
    for (int64_t t = 2; t <= 2 * int64_t(arch.perf.cores); ++t) {
      const int64_t b = align_up(ceil_div(extent, t), kFractalRows);
      if (b >= kFractalRows && b <= arch.max_block_mn) out.push_back(b);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

GemmConfig select_gemm_config(const GemmDesc& d, const ArchLimits& arch) {
  GemmConfig best;
  double best_score = INFINITY, best_work = 0.0;
  const int64_t m_cap = align_up(std::max<int64_t>(d.m, 1), kFractalRows);
  const int64_t n_cap = align_up(std::max<int64_t>(d.n, 1), kFractalRows);
  const auto [bm_multiple, bn_multiple] = block_size_multiple_of();
  const int64_t m_floor = align_up(std::max({d.m_multiple, bm_multiple, int64_t(1)}), kFractalRows);
  const int64_t n_floor = align_up(bn_multiple, kFractalRows);
  // Tiles compute only align16(rows) x align16(cols), so the smallest block that covers all of M (N)
  // costs what an exact one would; larger ones add nothing.
  auto covers = [](int64_t prev, int64_t cap) { return prev >= cap; };
  const std::vector<int64_t> m_sizes = block_candidates(d.m, d, arch), n_sizes = block_candidates(d.n, d, arch);
  int64_t prev_bm = 0;
  for (int64_t bm : m_sizes) {
    if (covers(prev_bm, std::max(m_cap, m_floor))) break;
    prev_bm = bm;
    int64_t prev_bn = 0;
    for (int64_t bn : n_sizes) {
      if (covers(prev_bn, std::max(n_cap, n_floor))) break;
      prev_bn = bn;
      for (int64_t bk : kBlockK)
        for (int64_t l0k : kL0K) {
          const GemmTiling t{.block_m = bm, .block_n = bn, .block_k = bk, .l0_k = l0k, .l1_stages = kL1Stages,
                             .l0_stages = kL0Stages};
          if (!fits(t, d, arch)) continue;
          const auto [s, work] = score(t, d, arch);
          // Ties (within the model's resolution on NPU archs) go to the larger tiles (more reuse than
          // the model credits), then to the larger K tiles (fewer pipeline steps), then the larger L0 K.
          // A promoted GEMM first takes the least work a core among tied configs: its vector cores' passes
          // follow the products through a few UB slots, not hidden under the HBM floor as the cube's work is.
          const double tie = arch.perf.cores > 0 ? kModelTie * best_score : 0.0;
          const auto& b = best.tiling;
          const bool larger = bm * bn != b.block_m * b.block_n ? bm * bn > b.block_m * b.block_n
                              : bk != b.block_k                 ? bk > b.block_k
                                                                : l0k > b.l0_k;
          const bool lighter =
              best_work > 0 && std::fabs(work - best_work) > kModelTie * best_work ? work < best_work : larger;
          const bool better = s < best_score - tie || (std::fabs(s - best_score) <= tie &&
                                                       (arch.perf.cores > 0 ? lighter : (bk > b.block_k ||
                                                        (bk == b.block_k && l0k > b.l0_k))));
          if (better) {
            best_score = s;
            best_work = work;
            best.tiling = t;
          }
        }
    }
  }
  DGA_REQUIRE(best_score < INFINITY || (bm_multiple == 1 && bn_multiple == 1), kValue, "set_block_size_multiple_of",
              "no tile config has block_m a multiple of ", bm_multiple, " and block_n a multiple of ", bn_multiple,
              " for ", to_string(d));
  const int64_t m_tiles = ceil_div(std::max<int64_t>(d.m, 1), best.tiling.block_m);
  const int64_t n_tiles = ceil_div(std::max<int64_t>(d.n, 1), best.tiling.block_n);
  best.swizzle = {arch.swizzle_band, m_tiles >= n_tiles};
  best.num_blocks = int(std::min<int64_t>(m_tiles * n_tiles, std::max(1, d.num_cores)));
  return best;
}

std::string to_string(const GemmDesc& d) {
  std::ostringstream os;
  os << "GemmDesc{m=" << d.m << ", n=" << d.n << ", k=" << d.k << ", a_bits=" << d.a_bits << ", b_bits=" << d.b_bits
     << ", d_bytes=" << d.d_bytes << ", acc=" << d.with_accumulation << ", cores=" << d.num_cores
     << ", promote_k=" << d.promote_k << (d.mx_scales ? ", mx" : "");
  if (d.groups != 1) os << ", groups=" << d.groups;
  if (d.second_b) os << ", second_b";
  os << "}";
  return os.str();
}

std::string to_string(const GemmConfig& c) {
  const auto& t = c.tiling;
  std::ostringstream os;
  os << "GemmConfig{block=" << t.block_m << "x" << t.block_n << "x" << t.block_k << ", l0_k=" << t.l0_k
     << ", stages(l1,l0)=(" << t.l1_stages << "," << t.l0_stages << "), swizzle=" << c.swizzle.band
     << (c.swizzle.along_m ? "m" : "n") << ", blocks=" << c.num_blocks << "}";
  return os.str();
}

}  // namespace deepgemm_ascend::heuristics
