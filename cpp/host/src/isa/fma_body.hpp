// Cube micro-kernel body for CPUs without a bf16 dot product (AVX2, AVX-512F): fp32 FMAs on exactly
// widened bf16, written once against an Ops policy that names the vector type and its few instructions.
// Each ISA's file defines its Ops (in an anonymous namespace, so every instantiation stays in the file
// compiled with that ISA's flags) and instantiates run<Ops>.
//
// bf16 widens to fp32 exactly by a 16-bit shift. Per call, L0A is widened once into a thread-local fp32
// copy in the same Nz order, so a broadcast of one A value is a plain load. L0B stays as it is: one
// vector load of a K-pair row gives kLanes columns of the even K value (shift) and of the odd one (mask).
//
// Register tile: kR rows x kV vectors of kLanes columns (kV vectors may split one 16-column block, as
// AVX2's two halves do, or span several, as AVX-512's two blocks do). Per K value: kR x kV FMAs on kV B
// vectors and kR broadcasts. Tiles of rows cross A's 16-row fractals freely (Nz rows of one K block, and
// L0C rows of one column block, are contiguous). Each element sums its K products in K order with one FMA
// each, so every Ops gives the same bits.
//
// Ops provides: Vec; kLanes (fp32 lanes); kRows (rows of a full tile); kVecs (vectors per row of a full
// tile); kMaxTailRows (the largest tail tile that fits the registers: 4 or 8); widen(16-bit codes) ->
// kLanes fp32; even / odd(K-pair row) -> kLanes fp32; broadcast(const float*); load, store, mul,
// fmadd(a, b, c) = a * b + c, set1, zero.
#pragma once

#include <cstdint>
#include <vector>

#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host::fma {

inline constexpr int64_t kBlock = kCubeBlock;
inline constexpr int64_t kPairs = kBlock / kKPair;
// Fewer rows than this leave too few accumulators to cover the FMA latency.
inline constexpr int kMinTailRows = 4;

// L0A widened to fp32 in the same Nz order: row m, K value k of K block kb at (kb * m_pad + m) * 16 + k % 16.
template <class Ops>
const float* widen_a(const MmadArgs& o) {
  thread_local std::vector<float> buf;
  buf.resize(size_t(o.m_pad * o.k_pad));
  for (int64_t i = 0; i < o.m_pad * o.k_pad; i += Ops::kLanes) Ops::store(buf.data() + i, Ops::widen(o.a + i));
  return buf.data();
}

// acc += a * b, always in the accumulator's register: given the choice of vfmadd132/213/231, GCC moves the
// accumulators between registers from one K step to the next and spills them. (Templated on Ops, as everything
// here, so that no instantiation is shared between files compiled with different flags.)
template <class Ops, class Vec = typename Ops::Vec>
inline void fma_into(Vec& acc, Vec a, Vec b) {
  __asm__("vfmadd231ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
}

// Where vector j of a tile starting at column block nb lies: its column block and the lane offset in it.
template <class Ops>
struct VecPlace {
  static constexpr int kPerBlock = int(kBlock) / Ops::kLanes;
  static constexpr int64_t block(int j) { return j / kPerBlock; }
  static constexpr int64_t lane(int j) { return (j % kPerBlock) * Ops::kLanes; }
};

template <class Ops, int kR, int kV>
inline void register_tile(const MmadArgs& o, const float* a, int64_t m0, int64_t nb) {
  using Vec = typename Ops::Vec;
  using P = VecPlace<Ops>;
  const bool scaled = o.row_scale != nullptr;
  float* c[kV];
  const uint16_t* b[kV];
#pragma GCC unroll 4
  for (int j = 0; j < kV; ++j) {
    c[j] = o.c + ((nb + P::block(j)) * o.m_pad + m0) * kBlock + P::lane(j);
    b[j] = o.b + (nb + P::block(j)) * o.b_panel_stride() + P::lane(j) * kKPair;
  }
  // Unscaled accumulation continues from c, so every element sums its K products in K order however the GEMM
  // splits K into L0 steps (results do not depend on the tiling, e.g. on the core count).
  Vec acc[kR][kV];
#pragma GCC unroll 16
  for (int r = 0; r < kR; ++r)
    _Pragma("GCC unroll 4") for (int j = 0; j < kV; ++j) acc[r][j] =
        o.init || scaled ? Ops::zero() : Ops::load(c[j] + r * kBlock);
  a += m0 * kBlock;
  for (int64_t kb = 0; kb < o.k_pad / kBlock; ++kb, a += o.m_pad * kBlock) {
#pragma GCC unroll 8
    for (int64_t p = 0; p < kPairs; ++p) {
      const int64_t at = (kb * kPairs + p) * kBlock * kKPair;  // K-pair row (kb, p) of a column block
      Vec half[kV];
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) half[j] = Ops::even(b[j] + at);
#pragma GCC unroll 16
      for (int r = 0; r < kR; ++r) {
        const Vec av = Ops::broadcast(a + r * kBlock + kKPair * p);
        _Pragma("GCC unroll 4") for (int j = 0; j < kV; ++j) fma_into<Ops>(acc[r][j], av, half[j]);
      }
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) half[j] = Ops::odd(b[j] + at);
#pragma GCC unroll 16
      for (int r = 0; r < kR; ++r) {
        const Vec av = Ops::broadcast(a + r * kBlock + kKPair * p + 1);
        _Pragma("GCC unroll 4") for (int j = 0; j < kV; ++j) fma_into<Ops>(acc[r][j], av, half[j]);
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kV; ++j) {
    if (!scaled) {
      _Pragma("GCC unroll 16") for (int r = 0; r < kR; ++r) Ops::store(c[j] + r * kBlock, acc[r][j]);
      continue;
    }
    const Vec col = Ops::load(o.col_scale + (nb + P::block(j)) * kBlock + P::lane(j));
#pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      float* out = c[j] + r * kBlock;
      const Vec s = Ops::mul(col, Ops::set1(o.row_scale[m0 + r]));
      Ops::store(out, o.init ? Ops::mul(acc[r][j], s) : Ops::fmadd(acc[r][j], s, Ops::load(out)));
    }
  }
}

// Every row of the kV vectors' columns from block nb: full tiles of kRows, then the rows left in tiles of
// kMinTailRows up to kMaxTailRows. m_pad is a multiple of 16, so with an even kRows the rows left are a
// multiple of 4 or leave 2; then one full tile's rows join them (AVX2: 6-row tiles, 2 left: two 4-row tiles).
// The columns' B (k_pad x kV x kLanes bf16) stays in L1d across the sweep.
template <class Ops, int kV>
void sweep_rows(const MmadArgs& o, const float* a, int64_t nb) {
  static_assert(Ops::kRows % 2 == 0 && Ops::kMaxTailRows % kMinTailRows == 0);
  int64_t tail = o.m_pad % Ops::kRows;
  if (tail % kMinTailRows != 0) tail += Ops::kRows;
  int64_t m = 0;
  for (; m < o.m_pad - tail; m += Ops::kRows) register_tile<Ops, Ops::kRows, kV>(o, a, m, nb);
  for (; m < o.m_pad; m += kMinTailRows) {
    if constexpr (Ops::kMaxTailRows >= 2 * kMinTailRows) {
      if (o.m_pad - m >= 2 * kMinTailRows) {
        register_tile<Ops, 2 * kMinTailRows, kV>(o, a, m, nb);
        m += kMinTailRows;
        continue;
      }
    }
    register_tile<Ops, kMinTailRows, kV>(o, a, m, nb);
  }
}

// The whole L0 product: column tiles of kVecs vectors, a last narrower one of single blocks.
template <class Ops>
void run(const MmadArgs& o) {
  using P = VecPlace<Ops>;
  static_assert(Ops::kVecs % P::kPerBlock == 0, "a full tile covers whole column blocks");
  constexpr int64_t kTileBlocks = Ops::kVecs / P::kPerBlock;
  const float* a = widen_a<Ops>(o);
  const int64_t n_blocks = o.n_pad / kBlock;
  int64_t nb = 0;
  for (; nb + kTileBlocks <= n_blocks; nb += kTileBlocks) sweep_rows<Ops, Ops::kVecs>(o, a, nb);
  if constexpr (kTileBlocks > 1)
    for (; nb < n_blocks; ++nb) sweep_rows<Ops, P::kPerBlock>(o, a, nb);
}

}  // namespace deepgemm_ascend::tile::host::fma
