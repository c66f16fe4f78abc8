// B operand path of the host GEMM, one thread (docs/performance/host_speed_issue18_avx512f.md, seventh part):
// GM -> L1 then every L1 -> L0B load of a B matrix in tiles of 256 x 512 (L0 K steps of 256), two ways side by side:
//   Nz:          layout::nd_to_nz, then per 16 x 16 fractal the K-pair interleave (widened first for fp8):
//                the path before K-pair panels, rebuilt here from the library's pieces;
//   pair panels: tile::host::nd_to_pair_panels (copy_gm_to_l1b), then per 16 columns of N one contiguous copy
//                (bf16) or widening (fp8), as tile::host::load_l1_to_l0b does.
// usage: b_path_bench [copy|full] [N]: `copy` times the GM -> L1 copy only; N rows of K = 2048 (16384: the
// source streams from DRAM; 256: it stays in L2, repeated to the same bytes). Best of 8 alternating rounds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/layout/transform.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/pair_panels.hpp"
#include "deepgemm_ascend/host/widen.hpp"

namespace dga = deepgemm_ascend;
using dga::tile::OperandFormat;

namespace {

constexpr int64_t kBlockN = 256, kBlockK = 512, kL0K = 256, kK = 2048, kFrac = 16;

void nz_path(const dga::layout::MatrixRef& b, uint8_t* l1, uint16_t* l0b, OperandFormat fmt, bool copy_only) {
  const auto interleave = dga::tile::host::interleave_k_pairs_fn();
  uint16_t widened[kFrac * kFrac];
  for (int64_t n0 = 0; n0 < b.rows; n0 += kBlockN)
    for (int64_t k0 = 0; k0 < b.cols; k0 += kBlockK) {
      const auto g = dga::layout::NzGeometry::fit(kBlockN, kBlockK, b.bits);
      dga::layout::nd_to_nz(b.block(n0, k0, kBlockN, kBlockK), l1, g);
      if (copy_only) continue;
      for (int64_t kk = 0; kk < kBlockK; kk += kL0K) {
        const dga::tile::L0BGeometry dg{kL0K, kBlockN};
        for (int64_t n = 0; n < kBlockN; n += kFrac)
          for (int64_t k = 0; k < kL0K; k += kFrac) {
            auto* o = reinterpret_cast<uint32_t*>(l0b) + dg.offset(k, n) / 2;
            const uint8_t* f = l1 + g.offset(n, kk + k) * b.bits / 8;
            if (fmt == OperandFormat::kBF16) {
              interleave(reinterpret_cast<const uint16_t*>(f), kFrac, o);
            } else {
              dga::tile::host::widen_rows(fmt, f, dga::layout::kC0Bytes, kFrac, widened, kFrac);
              interleave(widened, kFrac, o);
            }
          }
        asm volatile("" ::: "memory");
      }
    }
}

void panel_path(const dga::layout::MatrixRef& b, uint8_t* l1, uint16_t* l0b, OperandFormat fmt, bool copy_only) {
  for (int64_t n0 = 0; n0 < b.rows; n0 += kBlockN)
    for (int64_t k0 = 0; k0 < b.cols; k0 += kBlockK) {
      const auto g = dga::layout::NzGeometry::fit(kBlockN, kBlockK, b.bits);
      dga::tile::host::nd_to_pair_panels(b.block(n0, k0, kBlockN, kBlockK), l1, g);
      if (copy_only) continue;
      const dga::tile::L0BGeometry p = dga::tile::host::pair_panels(g);
      for (int64_t kk = 0; kk < kBlockK; kk += kL0K) {
        const dga::tile::L0BGeometry dg{kL0K, kBlockN};
        for (int64_t n = 0; n < kBlockN; n += kFrac) {
          const uint8_t* from = l1 + p.offset(kk, n) * b.bits / 8;
          uint16_t* to = l0b + dg.offset(0, n);
          if (fmt == OperandFormat::kBF16) std::memcpy(to, from, kL0K * kFrac * sizeof(uint16_t));
          else dga::tile::host::widen_rows(fmt, from, kFrac * b.bits / 8, kL0K, to, kFrac);
        }
        asm volatile("" ::: "memory");
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  const bool copy_only = argc > 1 && std::strcmp(argv[1], "copy") == 0;
  const int64_t n = argc > 2 ? std::atol(argv[2]) : 16384, reps = std::max<int64_t>(1, 16384 / n);
  for (int bits : {16, 8}) {
    const auto fmt = bits == 16 ? OperandFormat::kBF16 : OperandFormat::kE4M3;
    std::vector<uint8_t> codes(size_t(n * kK * bits / 8));
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = uint8_t((i * 2654435761u >> 13) & 0x77);
    const dga::layout::MatrixRef b{codes.data(), 0, n, kK, kK, 1, bits};
    std::vector<uint8_t> l1(size_t(kBlockN * kBlockK * 2));
    std::vector<uint16_t> l0b(size_t(kBlockN * kL0K));
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < 8; ++round)
      for (int way = 0; way < 2; ++way) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t r = 0; r < reps; ++r)
          (way == 0 ? nz_path : panel_path)(b, l1.data(), l0b.data(), fmt, copy_only);
        best[way] = std::min(best[way], std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    std::printf("%s B %ldx%ld (%s): Nz %.2f ms, pair panels %.2f ms, Nz / pair panels %.2f\n", bits == 16 ? "bf16" : "fp8 ",
                long(n), long(kK), copy_only ? "GM -> L1 only" : "GM -> L1 -> L0B", best[0], best[1], best[0] / best[1]);
  }
}
