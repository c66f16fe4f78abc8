// The bf16 B tile's last hop on the host, one thread (docs/performance/host_speed_issue18.md, eighth part): per L0
// K step of a 256 x 512 L1 tile of K-pair panels, the micro-kernel of this CPU's ISA on an M x 256 x 256 product,
// two ways side by side:
//   copy: the panels' K range copied into a compact L0B tile (as checked runs do), then mmad;
//   view: mmad reading the K range where it lies in L1 (MmadArgs::b_panel, tile/l0b_views.hpp).
// usage: l0b_view_bench [M ...] (default 64 128 256). Best of 16 alternating rounds of 64 L1 tiles.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/tile/micro_kernels.hpp"
#include "deepgemm_ascend/tile/pair_panels.hpp"

namespace dga = deepgemm_ascend;
namespace host = dga::tile::host;

namespace {

constexpr int64_t kBlockN = 256, kBlockK = 512, kL0K = 256, kPanel = 16, kTiles = 64, kRounds = 16;

void l1_tile(int64_t m, const std::vector<uint16_t>& l1, const std::vector<uint16_t>& a, std::vector<uint16_t>& l0b,
             std::vector<float>& c, bool view) {
  const dga::tile::L0BGeometry panels{kBlockK, kBlockN};  // tile::pair_panels of the L1 tile
  const host::MmadBf16Fn mmad = host::mmad_bf16();
  for (int64_t k = 0; k < kBlockK; k += kL0K) {
    host::MmadArgs args{c.data(), a.data(), l0b.data(), m, kBlockN, kL0K, k == 0};
    if (view) {
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
    std::vector<uint16_t> a(size_t(m * kL0K), 0x3F80);
    std::vector<float> c(size_t(m * kBlockN));
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < kRounds; ++round)
      for (int way = 0; way < 2; ++way) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t t = 0; t < kTiles; ++t) l1_tile(m, l1, a, l0b, c, way == 1);
        best[way] = std::min(best[way], std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    std::printf("M %4ld x 256 x 512 (%ld L1 tiles): copy + mmad %.2f ms, view mmad %.2f ms, copy / view %.3f\n", long(m),
                long(kTiles), best[0], best[1], best[0] / best[1]);
  }
}
