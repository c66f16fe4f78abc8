#include "deepgemm_ascend/heuristics/perf_model.hpp"

#include <algorithm>
#include <cmath>

#include "deepgemm_ascend/layout/fractal.hpp"

namespace deepgemm_ascend::heuristics {

using layout::align_up;
using layout::ceil_div;
using layout::kFractalRows;

namespace {
double cube_rate(const PerfModel& p, int bits) {
  return bits <= 4 ? p.cube_flops_per_cycle_4 : bits <= 8 ? p.cube_flops_per_cycle_8 : p.cube_flops_per_cycle_16;
}
}  // namespace

Prediction predict_gemm(const GemmDesc& d, const GemmTiling& t, const PerfModel& p) {
  Prediction r;
  if (p.cores == 0 || d.m == 0 || d.n == 0 || d.k == 0) return r;
  const int64_t cores = std::max(1, std::min(d.num_cores, p.cores));
  const int64_t m_tiles = ceil_div(d.m, t.block_m), n_tiles = ceil_div(d.n, t.block_n);
  const int64_t groups = std::max<int64_t>(d.groups, 1);
  const double waves = double(ceil_div(groups * m_tiles * n_tiles, cores));
  const double bm = double(align_up(std::min(t.block_m, align_up(d.m, kFractalRows)), kFractalRows));
  const double bn = double(align_up(std::min(t.block_n, align_up(d.n, kFractalRows)), kFractalRows));
  const double k = double(align_up(d.k, kFractalRows));
  // The cube runs at the rate of the wider operand (MX FP4 x FP8 runs at the FP8 rate).
  const int bits = std::max(d.a_bits, d.b_bits);
  const double a_bytes = bm * k * d.a_bits / 8.0, b_bytes = bn * k * d.b_bits / 8.0;
  r.cube_cycles = waves * 2.0 * bm * bn * k / cube_rate(p, bits);
  r.mte2_cycles = waves * (a_bytes + b_bytes) / (p.l2_bytes_per_cycle / double(cores));
  r.mte1_cycles = waves * (a_bytes + b_bytes) / p.l1_to_l0_bytes_per_cycle;
  // FP32 block scales: each K block's fp32 product passes the group's vector cores (rows split between them).
  if (d.promote_k > 0 && p.vector_cores_per_cube > 0) {
    const double products = double(ceil_div(d.k, d.promote_k)) * bm * bn * sizeof(float);
    r.vector_cycles = waves * products * kPromotionOpsPerRegister /
                      (p.vector_bytes_per_cycle * double(p.vector_cores_per_cube));
  }
  const double unique = double(groups) * (double(d.m) * d.k * d.a_bits / 8.0 + double(d.n) * d.k * d.b_bits / 8.0 +
                                          double(d.m) * d.n * d.d_bytes * (d.with_accumulation ? 2 : 1));
  r.hbm_floor_cycles = unique / p.hbm_bytes_per_cycle;
  // Pipeline fill: the first K step of the first tile is copied before the cube starts.
  const double fill = (bm + bn) * double(std::min<int64_t>(t.block_k, d.k)) * bits / 8.0 / (p.l2_bytes_per_cycle / cores);
  const double per_core = std::max({r.cube_cycles, r.mte2_cycles, r.mte1_cycles, r.vector_cycles}) + fill;
  r.per_core_cycles = per_core;
  const double cycles = std::max(per_core, r.hbm_floor_cycles);
  r.bound = cycles == r.hbm_floor_cycles          ? "hbm"
            : per_core - fill == r.cube_cycles     ? "cube"
            : per_core - fill == r.mte2_cycles     ? "mte2"
            : per_core - fill == r.mte1_cycles     ? "mte1"
                                                    : "vector";
  r.seconds = cycles / (p.clock_ghz * 1e9);
  r.tflops = 2.0 * double(groups) * double(d.m) * double(d.n) * double(d.k) / r.seconds / 1e12;
  return r;
}

}  // namespace deepgemm_ascend::heuristics
