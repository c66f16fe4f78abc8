// Every host cube micro-kernel this CPU runs, called directly on L0 buffers: c (=|+=) a * b, unscaled and
// scaled, against a float64 reference, on row counts that leave every register-tile tail and odd numbers of
// column blocks and K fractals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/tile/cube_format.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace micro_kernels_test {  // named: the unity build merges anonymous namespaces

namespace rt = deepgemm_ascend::tile::host;
namespace host = deepgemm_ascend::tile::host;
using deepgemm_ascend::core::bf16_to_float;
using deepgemm_ascend::core::float_to_bf16;
constexpr int64_t B = deepgemm_ascend::tile::kCubeBlock;
constexpr int64_t P = deepgemm_ascend::tile::kKPair;

struct Case {
  int64_t m, n, k;
  bool init, scaled;
};

// Row-major operands, their L0 layouts and the float64 reference.
struct Problem {
  Case s;
  std::vector<uint16_t> a, b;      // a: m x k, b: k x n (bf16 codes)
  std::vector<float> row, col, c;  // c: L0C Nz, as it was before the call
  Problem(const Case& cs, uint32_t seed) : s(cs), a(cs.m * cs.k), b(cs.k * cs.n), row(cs.m), col(cs.n), c(cs.m * cs.n) {
    std::mt19937 g(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::uniform_real_distribution<float> u(0.5f, 2.0f);
    for (auto& x : a) x = float_to_bf16(d(g));
    for (auto& x : b) x = float_to_bf16(d(g));
    for (auto& x : row) x = u(g);
    for (auto& x : col) x = u(g);
    for (auto& x : c) x = d(g);
  }
  std::vector<uint16_t> l0a(int group) const {
    std::vector<uint16_t> out(s.m * s.k);
    for (int64_t kb = 0; kb < s.k / B; ++kb) {
      const auto f = host::l0a_fractal(kb, s.m, s.k, group);
      for (int64_t r = 0; r < s.m; ++r)
        for (int64_t j = 0; j < B; ++j) out[f.offset + r * f.row_stride + j] = a[r * s.k + kb * B + j];
    }
    return out;
  }
  // Column block nb, K fractal kb, K pair p, column n, value j of the pair.
  std::vector<uint16_t> l0b() const {
    std::vector<uint16_t> out(s.k * s.n);
    for (int64_t nb = 0; nb < s.n / B; ++nb)
      for (int64_t k = 0; k < s.k; ++k)
        for (int64_t n = 0; n < B; ++n)
          out[nb * s.k * B + (k / B) * B * B + ((k % B) / P * B + n) * P + k % P] = b[k * s.n + nb * B + n];
    return out;
  }
  double ref(int64_t m, int64_t n) const {
    double acc = 0;
    for (int64_t k = 0; k < s.k; ++k) acc += double(bf16_to_float(a[m * s.k + k])) * bf16_to_float(b[k * s.n + n]);
    if (s.scaled) acc *= double(row[m]) * col[n];
    return s.init ? acc : acc + c[nz(m, n)];
  }
  double bound(int64_t m, int64_t n) const {  // fp32 accumulation error allowance: sum of |products|
    double mag = 0;
    for (int64_t k = 0; k < s.k; ++k) mag += std::abs(double(bf16_to_float(a[m * s.k + k])) * bf16_to_float(b[k * s.n + n]));
    if (s.scaled) mag *= double(row[m]) * col[n];
    return 1e-5 * (mag + std::abs(c[nz(m, n)])) + 1e-30;
  }
  int64_t nz(int64_t m, int64_t n) const { return ((n / B) * s.m + m) * B + n % B; }
};

// L0B's 16-column panels `gap` values further apart than in L0B itself (as L1's K-pair panels hold them), the
// gaps NaN: b_panel of the spread copy.
std::vector<uint16_t> spread(const std::vector<uint16_t>& l0b, int64_t n, int64_t k, int64_t gap) {
  constexpr uint16_t kNaN = 0x7FC0;
  std::vector<uint16_t> out(size_t(n / B * (k * B + gap)), kNaN);
  for (int64_t nb = 0; nb < n / B; ++nb)
    std::copy_n(l0b.begin() + nb * k * B, k * B, out.begin() + nb * (k * B + gap));
  return out;
}

// gap > 0: B read from panels gap values apart (MmadArgs::b_panel).
std::vector<float> run(host::MmadBf16Fn fn, int group, const Problem& p, int64_t gap = 0) {
  const auto a = p.l0a(group), b = gap ? spread(p.l0b(), p.s.n, p.s.k, gap) : p.l0b();
  std::vector<float> c = p.c;
  host::MmadArgs args{.c = c.data(), .a = a.data(), .b = b.data(), .m_pad = p.s.m, .n_pad = p.s.n, .k_pad = p.s.k,
                      .init = p.s.init};
  if (gap) args.b_panel = p.s.k * B + gap;
  if (p.s.scaled) {
    args.row_scale = p.row.data();
    args.col_scale = p.col.data();
  }
  fn(args);
  return c;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  // m_pad % 12 = 4, 8, 0, 4, 8 (AVX-512F tails), % 6 = 2 and 4 (AVX2), 7 A fractals; 1, 3, 4 column blocks;
  // 1, 3 and 16 K fractals (odd ones leave AMX's staged last fractal).
  for (int64_t m : {16, 32, 48, 64, 80, 112})
    for (int64_t n : {16, 48, 64})
      for (int64_t k : {16, 48, 256})
        for (bool init : {true, false})
          for (bool scaled : {false, true}) v.push_back({m, n, k, init, scaled});
  return v;
}

TEST(MicroKernels, EveryIsaMatchesTheFloat64Reference) {
  for (const rt::HostIsa isa : rt::supported_host_isas()) {
    rt::set_host_isa(isa);
    uint32_t seed = 1;
    for (const Case& cs : cases()) {
      const Problem p(cs, seed++);
      const auto got = run(host::mmad_bf16(), host::l0a_k_group(), p);
      int64_t bad = 0;
      for (int64_t m = 0; m < cs.m; ++m)
        for (int64_t n = 0; n < cs.n; ++n) bad += !(std::abs(got[p.nz(m, n)] - p.ref(m, n)) <= p.bound(m, n));
      EXPECT_EQ(bad, 0) << rt::name(isa) << " " << cs.m << "x" << cs.n << "x" << cs.k << " init " << cs.init
                        << " scaled " << cs.scaled;
    }
  }
  rt::reset_host_isa();
}

// B's panels further apart (read where they lie in L1) give the same bits as B packed in L0B, on every ISA.
TEST(MicroKernels, EveryIsaReadsBPanelsAtAnyStride) {
  for (const rt::HostIsa isa : rt::supported_host_isas()) {
    rt::set_host_isa(isa);
    uint32_t seed = 200;
    for (const Case& cs : cases()) {
      const Problem p(cs, seed++);
      for (int64_t gap : {B * P, 7 * B * B})
        EXPECT_EQ(run(host::mmad_bf16(), host::l0a_k_group(), p, gap), run(host::mmad_bf16(), host::l0a_k_group(), p))
            << rt::name(isa) << " " << cs.m << "x" << cs.n << "x" << cs.k << " init " << cs.init << " gap " << gap;
    }
  }
  rt::reset_host_isa();
}

// AVX-512F and AVX2 sum each element's K products in K order with one fp32 FMA each, and scale alike.
TEST(MicroKernels, Avx512AndAvx2GiveTheSameBits) {
  const auto isas = rt::supported_host_isas();
  auto has = [&](rt::HostIsa i) { return std::find(isas.begin(), isas.end(), i) != isas.end(); };
  if (!has(rt::HostIsa::kAvx512) || !has(rt::HostIsa::kAvx2)) GTEST_SKIP() << "this CPU lacks AVX-512F or AVX2";
  uint32_t seed = 100;
  for (const Case& cs : cases()) {
    const Problem p(cs, seed++);
    EXPECT_EQ(run(&host::mmad_bf16_avx512, host::kNzKGroup, p), run(&host::mmad_bf16_avx2, host::kNzKGroup, p))
        << cs.m << "x" << cs.n << "x" << cs.k << " init " << cs.init << " scaled " << cs.scaled;
  }
}

}  // namespace micro_kernels_test
