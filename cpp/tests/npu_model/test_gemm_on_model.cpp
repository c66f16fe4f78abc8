// The NPU GEMM launchers (the shared templates on the AscendC primitive layer, cpp/npu, as the
// .asc entries launch them) in libdga_npu_model: compiled with the host compiler against the devkit's
// headers in CPU-debug mode and run on the instruction model (npu_model/), core after core, against a
// double reference. Every core's flags are checked (set twice, wait without set, left set), and the BF16
// GEMM's DMAs against its tensors' bounds. Our reading of the documentation, not the 950.
// DGA_NPU_MODEL_LIB names another build of the library (scripts/check_npu_model.sh plants errors that way).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/kernel/hc_prenorm.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace core = deepgemm_ascend::core;
namespace runtime = deepgemm_ascend::runtime;

namespace {

struct Shape {
  int64_t m, n, k;
  bool a_mn_major, b_mn_major;  // "t" A ([K, M] stored) / "n" B ([K, N] stored)
  bool fp32_out, with_c;
  int cores;
  int64_t block_m, block_n, block_k, l0_k;
};

DgaMatrix matrix(const void* p, int64_t rows, int64_t cols, bool mn_major) {
  return {.addr = uint64_t(uintptr_t(p)), .rows = rows, .cols = cols, .row_stride = mn_major ? 1 : cols,
          .col_stride = mn_major ? rows : 1};
}

// Runs the BF16 GEMM on the model and returns the number of elements outside one bf16 ulp (fp32 D: 1e-5).
int64_t run_bf16(const Shape& s) {
  std::mt19937 rng(uint32_t(s.m * 7 + s.n * 3 + s.k));
  std::normal_distribution<float> nd;
  std::vector<uint16_t> a(size_t(s.m * s.k)), b(size_t(s.n * s.k));
  for (auto& v : a) v = core::float_to_bf16(nd(rng));
  for (auto& v : b) v = core::float_to_bf16(nd(rng));
  // A(i, x) and B(j, x) of the logical [M, K] and [N, K] operands, stored K- or MN-major.
  auto av = [&](int64_t i, int64_t x) { return core::bf16_to_float(a[size_t(s.a_mn_major ? x * s.m + i : i * s.k + x)]); };
  auto bv = [&](int64_t j, int64_t x) { return core::bf16_to_float(b[size_t(s.b_mn_major ? x * s.n + j : j * s.k + x)]); };
  std::vector<float> d32(size_t(s.m * s.n), NAN), c(size_t(s.m * s.n));
  std::vector<uint16_t> d16(size_t(s.m * s.n), 0x7FC0);
  for (size_t i = 0; i < c.size(); ++i) c[i] = float(int(i % 5) - 2);
  if (s.with_c) d32 = c;  // the launcher has copied C into D; the kernel adds the product to D
  DgaGemmParams p{};
  p.a = matrix(a.data(), s.m, s.k, s.a_mn_major);
  p.b = matrix(b.data(), s.n, s.k, s.b_mn_major);
  p.d = {.addr = uint64_t(uintptr_t(s.fp32_out ? static_cast<void*>(d32.data()) : d16.data())), .rows = s.m,
         .cols = s.n, .row_stride = s.n, .col_stride = 1};
  p.d_dtype = int32_t(s.fp32_out ? core::DType::kFP32 : core::DType::kBF16);
  p.has_c = s.with_c ? 1 : 0;
  p.block_m = s.block_m, p.block_n = s.block_n, p.block_k = s.block_k, p.l0_k = s.l0_k;
  p.swizzle_band = 2, p.swizzle_along_m = 1;
  // Under the GM bounds checker: the kernel reads A and B and writes D, nothing else.
  const std::vector<runtime::GmRegion> gm = {{"a", a.data(), a.size() * 2}, {"b", b.data(), b.size() * 2},
                                             s.fp32_out ? runtime::GmRegion{"d", d32.data(), d32.size() * 4}
                                                        : runtime::GmRegion{"d", d16.data(), d16.size() * 2}};
  runtime::npu_model_launch("dga_npu_launch_gemm_bf16", unsigned(s.cores), &p, gm);
  int64_t bad = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double want = s.with_c ? c[size_t(i * s.n + j)] : 0.0;
      for (int64_t x = 0; x < s.k; ++x) want += double(av(i, x)) * bv(j, x);
      const double got = s.fp32_out ? d32[size_t(i * s.n + j)] : core::bf16_to_float(d16[size_t(i * s.n + j)]);
      const double tol = s.fp32_out ? 1e-5 * (std::fabs(want) + 1) : std::ldexp(std::fabs(want), -7) + 1e-3;
      bad += !(std::fabs(got - want) <= tol);
    }
  return bad;
}

// FP8 e4m3 (or packed FP4 e2m1, fp4) with UE8M0 MX scales (int16 pairs of K-adjacent exponents, K- or
// MN-major) on the MX kernel.
int64_t run_mx(int64_t m, int64_t n, int64_t k, bool mn_major_scales, int cores, bool fp4 = false) {
  std::mt19937 rng(uint32_t(m + 5 * n + k));
  std::normal_distribution<float> nd;
  std::uniform_int_distribution<int> ex(120, 134);
  const int64_t pairs = k / 64;
  const int64_t per_byte = fp4 ? 2 : 1;
  std::vector<uint8_t> a(size_t(m * k / per_byte)), b(size_t(n * k / per_byte));
  std::uniform_int_distribution<int> nib(0, 15);
  for (auto* x : {&a, &b})
    for (auto& v : *x) v = fp4 ? uint8_t(nib(rng) | nib(rng) << 4) : core::float_to_e4m3(nd(rng));
  // Value x of row r of an operand with `cols` K values.
  auto value = [&](const std::vector<uint8_t>& x, int64_t r, int64_t c) -> double {
    if (!fp4) return core::e4m3_to_float(x[size_t(r * k + c)]);
    return core::e2m1_to_float(uint8_t(x[size_t((r * k + c) / 2)] >> (4 * (c % 2))));
  };
  // Scale pair (r, p): two exponent bytes, K group 2p in the low byte.
  auto make_scales = [&](int64_t rows, std::vector<uint16_t>& sf, DgaScales& ds) {
    const int64_t rows16 = (rows + 15) / 16 * 16;
    sf.assign(size_t((mn_major_scales ? rows16 : rows) * pairs), 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < pairs; ++p)
        sf[size_t(mn_major_scales ? p * rows16 + r : r * pairs + p)] = uint16_t(ex(rng) | ex(rng) << 8);
    ds = {.addr = uint64_t(uintptr_t(sf.data())), .mn_stride = mn_major_scales ? 2 : pairs * 2,
          .k_stride = mn_major_scales ? rows16 * 2 : 2, .gran_mn = 1, .fp32 = 0};
  };
  std::vector<uint16_t> sfa, sfb;
  DgaGemmParams p{};
  make_scales(m, sfa, p.sfa);
  make_scales(n, sfb, p.sfb);
  auto scale = [&](const std::vector<uint16_t>& sf, int64_t rows, int64_t r, int64_t x) {
    const int64_t rows16 = (rows + 15) / 16 * 16, pr = x / 64;
    const uint16_t pair = sf[size_t(mn_major_scales ? pr * rows16 + r : r * pairs + pr)];
    return std::ldexp(1.0, int((pair >> (8 * ((x / 32) % 2))) & 0xFF) - 127);
  };
  std::vector<uint16_t> d(size_t(m * n), 0x7FC0);
  p.a = matrix(a.data(), m, k, false);
  p.b = matrix(b.data(), n, k, false);
  p.d = {.addr = uint64_t(uintptr_t(d.data())), .rows = m, .cols = n, .row_stride = n, .col_stride = 1};
  p.d_dtype = int32_t(core::DType::kBF16);
  p.block_m = 64, p.block_n = 64, p.block_k = fp4 ? 256 : 128, p.l0_k = fp4 ? 128 : 64, p.swizzle_band = 1,
  p.swizzle_along_m = 1;
  runtime::npu_model_launch(fp4 ? "dga_npu_launch_gemm_fp4_mx" : "dga_npu_launch_gemm_fp8_mx", unsigned(cores), &p);
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t x = 0; x < k; ++x)
        want += value(a, i, x) * scale(sfa, m, i, x) * value(b, j, x) * scale(sfb, n, j, x);
      const double got = core::bf16_to_float(d[size_t(i * n + j)]);
      bad += !(std::fabs(got - want) <= std::ldexp(std::fabs(want), -7) + 1e-30);
    }
  return bad;
}

// FP8 e4m3 with float32 block scales (A: per row and 128 K, B: per gran_n rows and 128 K; gran_n 1: MN-major,
// one per column) on the promoted mix kernel: each group's cube core and two vector cores run as threads,
// the cross-core flags and the access checker across them.
int64_t run_fp8_block(int64_t m, int64_t n, int64_t k, bool fp32_out, int groups, int64_t gran_n = 128) {
  constexpr int64_t kBlock = 128;
  std::mt19937 rng(uint32_t(3 * m + n + 7 * k));
  std::normal_distribution<float> nd;
  std::uniform_real_distribution<float> sd(0.01f, 0.1f);
  const int64_t kb = (k + kBlock - 1) / kBlock, nb = (n + gran_n - 1) / gran_n;
  std::vector<uint8_t> a(size_t(m * k)), b(size_t(n * k));
  for (auto* x : {&a, &b})
    for (auto& v : *x) v = core::float_to_e4m3(4 * nd(rng));
  std::vector<float> sa(size_t(m * kb)), sb(size_t(nb * kb));
  for (auto* x : {&sa, &sb})
    for (auto& v : *x) v = sd(rng);
  std::vector<float> d32(size_t(m * n), NAN);
  std::vector<uint16_t> d16(size_t(m * n), 0x7FC0);
  DgaGemmParams p{};
  p.a = matrix(a.data(), m, k, false);
  p.b = matrix(b.data(), n, k, false);
  p.d = {.addr = uint64_t(uintptr_t(fp32_out ? static_cast<void*>(d32.data()) : d16.data())), .rows = m, .cols = n,
         .row_stride = n, .col_stride = 1};
  p.d_dtype = int32_t(fp32_out ? core::DType::kFP32 : core::DType::kBF16);
  constexpr int64_t kFloat = sizeof(float);
  p.sfa = {.addr = uint64_t(uintptr_t(sa.data())), .mn_stride = kb * kFloat, .k_stride = kFloat, .gran_mn = 1,
           .fp32 = 1};
  const bool mn_major = gran_n == 1;  // sb [kb, n] then, else [nb, kb]
  p.sfb = {.addr = uint64_t(uintptr_t(sb.data())), .mn_stride = (mn_major ? 1 : kb) * kFloat,
           .k_stride = (mn_major ? n : 1) * kFloat, .gran_mn = gran_n, .fp32 = 1};
  // Every L0 step is one promotion block (the heuristics' rule l0_k == promote_k).
  p.block_m = 64, p.block_n = 64, p.block_k = kBlock, p.l0_k = kBlock, p.swizzle_band = 1, p.swizzle_along_m = 1;
  p.promote_k = kBlock;
  runtime::npu_model_launch("dga_npu_launch_gemm_fp8_block", unsigned(groups), &p);
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t x = 0; x < k; ++x)
        want += double(core::e4m3_to_float(a[size_t(i * k + x)])) * sa[size_t(i * kb + x / kBlock)] *
                core::e4m3_to_float(b[size_t(j * k + x)]) *
                sb[size_t(mn_major ? (x / kBlock) * n + j : (j / gran_n) * kb + x / kBlock)];
      const double got = fp32_out ? d32[size_t(i * n + j)] : core::bf16_to_float(d16[size_t(i * n + j)]);
      const double tol = fp32_out ? 1e-5 * (std::fabs(want) + 1) : std::ldexp(std::fabs(want), -7) + 1e-3;
      bad += !(std::fabs(got - want) <= tol);
    }
  return bad;
}

// The HC pre-norm vector pass (hc_prenorm.asc, AIV only) on `cores` vector cores against its definition:
// hi = bf16(b), lo = bf16(b - hi), D zeroed and the ends exact; the sums of squares within fp32 error.
// A and D with row strides beyond their widths. Returns the number of wrong values.
int64_t run_hc_vector(int64_t m, int64_t n, int64_t k, int64_t splits, int cores) {
  constexpr int64_t kKBlock = 64, kPad = 64;
  std::mt19937 rng(uint32_t(m + n + k + splits));
  std::normal_distribution<float> nd;
  std::vector<uint16_t> a(size_t(m * (k + kPad))), hi(size_t(n * k), 0x7FC0), lo(hi);
  std::vector<float> b(size_t(n * k)), d(size_t(splits * m * (n + kPad)), NAN), sq(size_t(splits * m), NAN);
  std::vector<int32_t> ends(size_t(splits), -1);
  for (auto& v : a) v = core::float_to_bf16(nd(rng));
  for (auto& v : b) v = nd(rng) * std::ldexp(1.0f, int(rng() % 9) - 4);
  const auto addr = [](const void* p) { return uint64_t(uintptr_t(p)); };
  const DgaHcPrenormParams p{.a = {addr(a.data()), m, k, k + kPad, 1}, .b = {addr(b.data()), n, k, k, 1},
                             .d = {addr(d.data()), m, n, n + kPad, 1}, .hi = addr(hi.data()), .lo = addr(lo.data()),
                             .sqr_sum = addr(sq.data()), .ends = addr(ends.data()), .d_split = m * (n + kPad),
                             .splits = splits, .k_block = kKBlock};
  runtime::npu_model_launch("dga_npu_launch_hc_prenorm_vector", unsigned(cores), &p);
  int64_t bad = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const uint16_t h = core::float_to_bf16(b[i]), l = core::float_to_bf16(b[i] - core::bf16_to_float(h));
    bad += hi[i] != h || lo[i] != l;
  }
  for (int64_t s = 0; s < splits; ++s) {
    const auto r = deepgemm_ascend::kernel::hc_split_range(k / kKBlock, splits, s);
    bad += ends[size_t(s)] != (r.first + r.count) * kKBlock;
    for (int64_t i = 0; i < m; ++i) {
      double want = 0;
      for (int64_t x = r.first * kKBlock; x < (r.first + r.count) * kKBlock; ++x)
        want += std::pow(core::bf16_to_float(a[size_t(i * (k + kPad) + x)]), 2);
      bad += !(std::fabs(sq[size_t(s * m + i)] - want) <= 1e-5 * want);
      for (int64_t j = 0; j < n + kPad; ++j) {  // D's columns zeroed, the padding untouched
        const float v = d[size_t((s * m + i) * (n + kPad) + j)];
        bad += j < n ? v != 0.0f : !std::isnan(v);
      }
    }
  }
  return bad;
}

// FP8 MQA logits (mqa_logits.asc, a mix kernel) on `cores` groups against a double reference: logits (fp32,
// zeroed, row stride skv + 8) = kv_scale[j] * sum_h relu(q . kv) * w inside [ks, ke), -inf outside.
// Compressed (width > 0): logits [s, width] (row stride width + 8), row i's range at columns [0, ke - ks)
// and every other column still 0. Tiles of `queries` queries' rows (padded to 16) x block_n KV rows.
int64_t run_mqa(int64_t s, int64_t heads, int64_t dim, int64_t skv, int cores, int64_t width = 0,
                int64_t queries = 1, int64_t block_n = 128) {
  std::mt19937 rng(uint32_t(s + heads + dim + skv + width + queries));
  std::normal_distribution<float> nd;
  std::uniform_int_distribution<int64_t> pos(0, skv);
  std::vector<uint8_t> q(size_t(s * heads * dim)), kv(size_t(skv * dim));
  for (auto& v : q) v = core::float_to_e4m3(nd(rng));
  for (auto& v : kv) v = core::float_to_e4m3(nd(rng));
  const int64_t cols = width > 0 ? width : skv, stride = cols + 8;
  std::vector<float> w(static_cast<size_t>(s * heads)), scale(static_cast<size_t>(skv)),
      logits(static_cast<size_t>(s * stride), 0.0f);
  for (auto& v : w) v = nd(rng);
  for (auto& v : scale) v = std::ldexp(1.0f + 0.1f * nd(rng), -4);
  std::vector<int32_t> ks(static_cast<size_t>(s)), ke(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    const int64_t a = pos(rng), b = pos(rng);
    ks[size_t(i)] = int32_t(std::min(a, b)), ke[size_t(i)] = int32_t(std::max(a, b));
    if (width > 0) ke[size_t(i)] = int32_t(std::min<int64_t>(ke[size_t(i)], ks[size_t(i)] + width));
  }
  const auto addr = [](const void* p) { return uint64_t(uintptr_t(p)); };
  DgaMqaParams p{};
  p.gemm.a = {.addr = addr(q.data()), .rows = s * heads, .cols = dim, .row_stride = dim, .col_stride = 1};
  p.gemm.b = {.addr = addr(kv.data()), .rows = skv, .cols = dim, .row_stride = dim, .col_stride = 1};
  p.gemm.d_dtype = int32_t(core::DType::kFP32);
  p.gemm.block_m = (queries * heads + 15) / 16 * 16, p.gemm.block_n = block_n, p.gemm.block_k = dim, p.gemm.l0_k = dim;
  p.gemm.swizzle_band = 1, p.gemm.swizzle_along_m = 1;
  p.weights = addr(w.data()), p.ks = addr(ks.data()), p.ke = addr(ke.data()), p.kv_scale = addr(scale.data());
  p.logits = addr(logits.data()), p.w_stride = heads, p.logits_stride = stride, p.heads = heads;
  p.compressed = width;
  if (width == 0) {  // normal mode: -inf outside [ks, ke) first, as the dispatch does
    const DgaConvertParams fill{.src = {0, s, cols, cols, 1}, .dst = {addr(logits.data()), s, cols, stride, 1},
                                .src_dtype = int32_t(core::DType::kFP32), .dst_dtype = int32_t(core::DType::kFP32),
                                .lens = addr(ke.data()), .starts = addr(ks.data())};
    runtime::npu_model_launch("dga_npu_launch_convert_rows", unsigned(cores * 2), &fill);
  }
  runtime::npu_model_launch("dga_npu_launch_mqa_logits_fp8", unsigned(cores), &p);
  int64_t bad = 0;
  for (int64_t i = 0; i < s; ++i)
    for (int64_t c = 0; c < stride; ++c) {
      const float got = logits[size_t(i * stride + c)];
      const int64_t j = width > 0 ? ks[size_t(i)] + c : c;  // the KV row of column c
      if (c >= cols || (width > 0 && j >= ke[size_t(i)])) {  // past the logits' width or the compressed range
        bad += got != 0.0f;
        continue;
      }
      if (j < ks[size_t(i)] || j >= ke[size_t(i)]) {
        bad += !(std::isinf(got) && got < 0);
        continue;
      }
      double want = 0, mag = 0;
      for (int64_t h = 0; h < heads; ++h) {
        double dot = 0;
        for (int64_t x = 0; x < dim; ++x)
          dot += double(core::e4m3_to_float(q[size_t((i * heads + h) * dim + x)])) *
                 core::e4m3_to_float(kv[size_t(j * dim + x)]);
        want += std::max(dot, 0.0) * w[size_t(i * heads + h)];
        mag += std::max(dot, 0.0) * std::fabs(w[size_t(i * heads + h)]);
      }
      want *= scale[size_t(j)];
      bad += !(std::fabs(got - want) <= 1e-5 * mag * scale[size_t(j)] + 1e-6);
    }
  return bad;
}

// Packed FP4 rows widened to e4m3 by convert_rows (the FP8 x FP4 GEMMs' first launch): `pad` values of row
// padding in both matrices (the destination's left untouched), every byte against the host's conversion.
int64_t run_widen_fp4(int64_t rows, int64_t cols, int64_t pad, int cores) {
  std::mt19937 rng(uint32_t(rows * 3 + cols));
  const int64_t src_stride = cols + pad, dst_stride = cols + pad;
  constexpr uint8_t kPoison = 0xA5;
  std::vector<uint8_t> src(size_t(rows * src_stride / 2)), dst(size_t(rows * dst_stride), kPoison);
  for (auto& v : src) v = uint8_t(rng());
  const auto addr = [](const void* p) { return uint64_t(uintptr_t(p)); };
  const DgaConvertParams p{.src = {addr(src.data()), rows, cols, src_stride, 1},
                           .dst = {addr(dst.data()), rows, cols, dst_stride, 1},
                           .src_dtype = int32_t(core::DType::kFP4E2M1x2), .dst_dtype = int32_t(core::DType::kFP8E4M3),
                           .lens = 0,
                           .starts = 0};
  runtime::npu_model_launch("dga_npu_launch_convert_rows", unsigned(cores), &p);
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < dst_stride; ++c) {
      const uint8_t got = dst[size_t(r * dst_stride + c)];
      if (c >= cols) {
        bad += got != kPoison;
        continue;
      }
      const int64_t v = r * src_stride + c;  // value v: nibble v % 2 of byte v / 2, the low one first
      const uint8_t code = uint8_t((src[size_t(v / 2)] >> (4 * (v % 2))) & 0xF);
      bad += got != core::float_to_e4m3(core::e2m1_to_float(code));
    }
  return bad;
}

}  // namespace

TEST(NpuKernelsOnModel, Fp4WidensToE4m3Exactly) {
  EXPECT_EQ(run_widen_fp4(5, 320, 64, 3), 0) << "a 64-value step tail, padded rows";
  EXPECT_EQ(run_widen_fp4(3, 64, 0, 2), 0) << "one partial step per row, more cores than needed";
  EXPECT_EQ(run_widen_fp4(2, 20480, 128, 2), 0) << "rows over several UB chunks";
}

TEST(NpuKernelsOnModel, Fp8MqaLogitsMatchTheReference) {
  EXPECT_EQ(run_mqa(3, 16, 64, 300, 2), 0) << "16 heads: one query per tile, a KV column tail";
  EXPECT_EQ(run_mqa(5, 8, 32, 130, 3), 0) << "8 heads: two queries per tile, the last tile one query";
  EXPECT_EQ(run_mqa(2, 64, 128, 200, 1), 0) << "64 heads, head_dim 128";
  EXPECT_EQ(run_mqa(7, 32, 64, 300, 2, 0, 4), 0) << "32 heads, four queries per tile, the last tile three";
  EXPECT_EQ(run_mqa(5, 16, 64, 300, 2, 0, 3), 0) << "three queries per tile: the vector cores split the second";
  EXPECT_EQ(run_mqa(3, 64, 128, 260, 2, 0, 2), 0) << "64 heads, two queries per tile: one each vector core";
  EXPECT_EQ(run_mqa(3, 64, 128, 600, 2, 0, 2, 256), 0) << "the product's 128 x 256 tiles (L0C full)";
  EXPECT_EQ(run_mqa(3, 24, 64, 300, 2), 0) << "24 heads in 32-row tiles: one problem over all of q x kv";
}

TEST(NpuKernelsOnModel, CompressedFp8MqaLogitsMatchTheReference) {
  EXPECT_EQ(run_mqa(4, 16, 64, 300, 2, 200), 0) << "one query per problem, ranges over two KV tiles";
  EXPECT_EQ(run_mqa(5, 8, 32, 130, 3, 40), 0) << "8 heads, ranges clipped to the width";
}

TEST(NpuKernelsOnModel, HcPrenormVectorPassMatchesItsDefinition) {
  EXPECT_EQ(run_hc_vector(70, 16, 2368, 5, 3), 0) << "two row blocks, five splits, three cores";
  EXPECT_EQ(run_hc_vector(5, 8, 640, 12, 2), 0) << "more splits than K blocks: empty splits";
  EXPECT_EQ(run_hc_vector(3, 8, 16448, 1, 2), 0) << "rows of B and A over several UB chunks";
}

TEST(NpuKernelsOnModel, Fp8BlockScaledGemmMatchesTheReference) {
  EXPECT_EQ(run_fp8_block(96, 80, 384, false, 2), 0) << "bf16 D, two groups, a 16-column tile tail";
  EXPECT_EQ(run_fp8_block(40, 200, 256, true, 1), 0) << "fp32 D, B scales of two 128-row blocks";
  EXPECT_EQ(run_fp8_block(72, 100, 384, false, 2, 1), 0) << "per-column B scales (MN-major), a column tail";
}

TEST(NpuKernelsOnModel, Fp8AndFp4MxGemmsMatchTheReference) {
  EXPECT_EQ(run_mx(40, 24, 128, false, 1), 0) << "fp8, K-major scale pairs";
  EXPECT_EQ(run_mx(100, 70, 320, true, 2), 0) << "fp8, MN-major scale pairs";
  // fp4: a 48-row A puts a second L0 stage 1536 B on; LocalTensor<fp4x2> counts 4-bit values.
  EXPECT_EQ(run_mx(48, 40, 384, false, 2, true), 0) << "fp4";
  // MN-major scale pairs of more than 65,535 rows: the ND -> Nz copy's source row stride is M values.
  EXPECT_EQ(run_mx(65600, 16, 128, true, 2), 0) << "M above 16 bits, MN-major scales (two pairs along K)";
}

TEST(NpuKernelsOnModel, Bf16GemmMatchesTheReference) {
  const Shape shapes[] = {
      {.m = 40, .n = 24, .k = 70, .a_mn_major = false, .b_mn_major = false, .fp32_out = false, .with_c = false,
       .cores = 1, .block_m = 64, .block_n = 64, .block_k = 64, .l0_k = 32},      // the documentation's m 40, k 70
      {.m = 1, .n = 16, .k = 32, .a_mn_major = false, .b_mn_major = false, .fp32_out = false, .with_c = false,
       .cores = 1, .block_m = 64, .block_n = 64, .block_k = 64, .l0_k = 32},       // M = 1 (GEMV off)
      {.m = 300, .n = 200, .k = 300, .a_mn_major = false, .b_mn_major = false, .fp32_out = false, .with_c = false,
       .cores = 3, .block_m = 64, .block_n = 64, .block_k = 64, .l0_k = 32},   // tiles, K tail, three cores
      {.m = 129, .n = 257, .k = 1000, .a_mn_major = false, .b_mn_major = false, .fp32_out = true, .with_c = false,
       .cores = 2, .block_m = 128, .block_n = 128, .block_k = 128, .l0_k = 64}, // fp32 D
      {.m = 96, .n = 80, .k = 200, .a_mn_major = true, .b_mn_major = false, .fp32_out = false, .with_c = false,
       .cores = 2, .block_m = 64, .block_n = 64, .block_k = 64, .l0_k = 64},      // tn: A MN-major (DN2NZ)
      {.m = 96, .n = 80, .k = 200, .a_mn_major = false, .b_mn_major = true, .fp32_out = false, .with_c = false,
       .cores = 2, .block_m = 64, .block_n = 64, .block_k = 64, .l0_k = 64},      // nn: B MN-major
      {.m = 70, .n = 50, .k = 130, .a_mn_major = true, .b_mn_major = true, .fp32_out = true, .with_c = true, .cores = 2,
       .block_m = 64, .block_n = 64, .block_k = 64, .l0_k = 32},         // tt, fp32 D += product (C)
  };
  for (const Shape& s : shapes)
    EXPECT_EQ(run_bf16(s), 0) << s.m << "x" << s.n << "x" << s.k << " a_mn " << s.a_mn_major << " b_mn "
                              << s.b_mn_major << " fp32 " << s.fp32_out << " c " << s.with_c;
}

// Infinities and NaN reach a bf16 D as on the host: the GEMM sets CTRL[48] for its Fixpipe casts, which
// at the 950's reset CTRL saturate (inf -> +-max, NaN -> 0; L0C到GM数据搬运（Fixpipe）.md, 约束说明).
TEST(NpuKernelsOnModel, Bf16GemmKeepsInfinitiesAndNan) {
  if (!runtime::npu_model_available()) GTEST_SKIP() << runtime::npu_model_unavailable_reason();
  constexpr int64_t kM = 16, kN = 16, kK = 32;
  const uint16_t inf = core::float_to_bf16(INFINITY), one = core::float_to_bf16(1.0f), minus = core::float_to_bf16(-1.0f);
  std::vector<uint16_t> a(size_t(kM * kK), 0), b(size_t(kN * kK), one), d(size_t(kM * kN), 0x1234);
  a[0] = inf;                           // A(0, 0)
  a[size_t(kK)] = a[size_t(kK + 1)] = inf;  // A(1, 0), A(1, 1)
  b[size_t(1 * kK)] = minus;            // B(1, 0)
  b[size_t(2 * kK + 1)] = minus;        // B(2, 1)
  DgaGemmParams p{};
  p.a = matrix(a.data(), kM, kK, false);
  p.b = matrix(b.data(), kN, kK, false);
  p.d = {.addr = uint64_t(uintptr_t(d.data())), .rows = kM, .cols = kN, .row_stride = kN, .col_stride = 1};
  p.d_dtype = int32_t(core::DType::kBF16);
  p.block_m = 64, p.block_n = 64, p.block_k = 64, p.l0_k = 32;
  p.swizzle_band = 2, p.swizzle_along_m = 1;
  runtime::npu_model_launch("dga_npu_launch_gemm_bf16", 1, &p);
  const auto at = [&](int64_t i, int64_t j) { return core::bf16_to_float(d[size_t(i * kN + j)]); };
  EXPECT_EQ(at(0, 0), INFINITY);
  EXPECT_EQ(at(0, 1), -INFINITY);
  EXPECT_TRUE(std::isnan(at(1, 2))) << at(1, 2);  // inf - inf
  EXPECT_EQ(at(2, 0), 0.0f);
}
