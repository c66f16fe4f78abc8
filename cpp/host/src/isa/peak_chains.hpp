// The calibration loop of the vector micro-kernels (micro_kernels.hpp, PeakLoopFn): kChains independent
// chains of one multiply instruction on registers, enough to cover its latency on every port.
//
// Ops provides: Vec; kChains; kFlopsPerStep (FLOP of one instruction); init(i) -> Vec; step(Vec) -> Vec
// (the instruction); add(Vec, Vec). Ops lives in the ISA's file (anonymous namespace), so the loop is
// compiled with that file's flags.
#pragma once

#include <cstdint>
#include <cstring>

namespace deepgemm_ascend::tile::host {

template <class Ops>
double peak_chains(int64_t iters) {
  using Vec = typename Ops::Vec;
  Vec acc[Ops::kChains];
  // Every loop over the chains fully unrolled: otherwise the array stays in memory and each round stores it.
#pragma GCC unroll 16
  for (int i = 0; i < Ops::kChains; ++i) acc[i] = Ops::init(i);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < Ops::kChains; ++i) acc[i] = Ops::step(acc[i]);
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  Vec s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < Ops::kChains; ++i) s = Ops::add(s, acc[i]);
  float lanes[sizeof(Vec) / sizeof(float)];
  std::memcpy(lanes, &s, sizeof s);
  volatile float sink = lanes[0];
  (void)sink;
  return double(iters) * Ops::kChains * Ops::kFlopsPerStep;
}

}  // namespace deepgemm_ascend::tile::host
