// The bf16 operands' last hop on the host, one thread (docs/performance/host_speed_issue18_avx512f.md, eighth
// part): per L0 K step of an M x 512 Nz L1 tile of A and a 256 x 512 L1 tile of B's K-pair panels, the
// micro-kernel of this CPU's ISA (an AVX or scalar one: L0A in Nz) on an M x 256 x 256 product, three ways side
// by side:
//   copy:   A's and B's K ranges copied into L0A and L0B tiles (as checked runs do), then mmad;
//   B view: A copied, B read where it lies in L1 (MmadArgs::b_panel, host/l0_views.hpp);
//   views:  both read where they lie in L1.
// usage: l0_view_bench [M ...] (default 64 128 256). Best of 96 alternating rounds of 16 L1 tiles.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/pair_panels.hpp"

namespace dga = deepgemm_ascend;
namespace host = dga::tile::host;

namespace {

constexpr int64_t kBlockN = 256, kBlockK = 512, kL0K = 256, kPanel = 16, kTiles = 16, kRounds = 96;

enum Way { kCopy, kBView, kViews, kWays };

void l1_tile(int64_t m, const std::vector<uint16_t>& l1a, const std::vector<uint16_t>& l1, std::vector<uint16_t>& l0a,
             std::vector<uint16_t>& l0b, std::vector<float>& c, Way way) {
  const dga::tile::L0BGeometry panels{kBlockK, kBlockN};  // tile::host::pair_panels of the L1 tile
  const host::MmadBf16Fn mmad = host::mmad_bf16();
  for (int64_t k = 0; k < kBlockK; k += kL0K) {
    host::MmadArgs args{c.data(), l0a.data(), l0b.data(), m, kBlockN, kL0K, k == 0};
    const uint16_t* a = l1a.data() + k * m;  // Nz: the K range of every row is one run
    if (way == kViews) args.a = a;
    else std::memcpy(l0a.data(), a, size_t(m * kL0K) * sizeof(uint16_t));
    if (way != kCopy) {
      args.b = l1.data() + panels.offset(k, 0);
      args.b_panel = panels.offset(0, kPanel);
    } else {
      for (int64_t n = 0; n < kBlockN; n += kPanel)
        std::memcpy(l0b.data() + n * kL0K, l1.data() + panels.offset(k, n), kL0K * kPanel * sizeof(uint16_t));
    }
    mmad(args);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> ms;
  for (int i = 1; i < argc; ++i) ms.push_back(std::atol(argv[i]));
  if (ms.empty()) ms = {64, 128, 256};
  std::vector<uint16_t> l1(size_t(kBlockN * kBlockK)), l0b(size_t(kBlockN * kL0K));
  for (size_t i = 0; i < l1.size(); ++i) l1[i] = uint16_t(0x3F00 + (i * 2654435761u >> 20) % 0x100);
  for (int64_t m : ms) {
    std::vector<uint16_t> l1a(size_t(m * kBlockK), 0x3F80), l0a(size_t(m * kL0K));
    std::vector<float> c(size_t(m * kBlockN));
    double best[kWays] = {1e30, 1e30, 1e30};
    for (int round = 0; round < kRounds; ++round)
      for (int way = 0; way < kWays; ++way) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t t = 0; t < kTiles; ++t) l1_tile(m, l1a, l1, l0a, l0b, c, Way(way));
        best[way] = std::min(best[way], std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    std::printf("M %4ld x 256 x 512 (%ld L1 tiles): copy %.2f ms, B view %.2f ms, views %.2f ms; copy / B view %.3f, "
                "copy / views %.3f\n", long(m), long(kTiles), best[kCopy], best[kBView], best[kViews],
                best[kCopy] / best[kBView], best[kCopy] / best[kViews]);
  }
}
