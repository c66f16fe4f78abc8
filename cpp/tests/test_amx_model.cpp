// The AMX micro-kernel body on an exact software model of the AMX tile registers, so its fractal
// addressing and tile configuration are tested on CPUs without AMX (on AMX CPUs the hardware path
// runs the whole GEMM suite as well).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "isa/amx_body.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "reference.hpp"

namespace amx = deepgemm_ascend::tile::host::amx;
namespace core = deepgemm_ascend::core;

namespace {

// Palette 1: 8 tiles of up to 16 rows x 64 bytes; an operation checks the shapes it relies on.
struct ModelTile {
  int rows = 0, bytes = 0;
  uint8_t data[16][64] = {};
};

struct ModelTiles {
  using Tile = ModelTile;
  static inline Tile tiles[8];
  static inline bool configured = false;

  static void configure(const amx::TileShape (&shapes)[8]) {
    for (int t = 0; t < 8; ++t) {
      if (shapes[t].rows > 16 || shapes[t].bytes > 64) throw std::logic_error("tile shape beyond palette 1");
      tiles[t] = Tile{shapes[t].rows, shapes[t].bytes, {}};
    }
    configured = true;
  }
  static Tile& get(int t) {
    if (!configured || t < 0 || t > 7) throw std::logic_error("tile used before configuration");
    return tiles[t];
  }
  static void zero(int t) { std::memset(get(t).data, 0, sizeof get(t).data); }
  static void load(int t, const void* p, int stride) {
    Tile& x = get(t);
    for (int r = 0; r < x.rows; ++r) std::memcpy(x.data[r], static_cast<const uint8_t*>(p) + r * stride, x.bytes);
  }
  static void store(int t, void* p, int stride) {
    Tile& x = get(t);
    for (int r = 0; r < x.rows; ++r) std::memcpy(static_cast<uint8_t*>(p) + r * stride, x.data[r], x.bytes);
  }
  // TDPBF16PS: C[m][n] += sum_k A[m][2k] * B[k][2n] + A[m][2k+1] * B[k][2n+1], in fp32.
  static void dpbf16(int c, int a, int b) {
    Tile &C = get(c), &A = get(a), &B = get(b);
    if (A.rows != C.rows || B.bytes != C.bytes || A.bytes != 4 * B.rows) throw std::logic_error("tile shapes mismatch");
    auto bf = [](const uint8_t* p) { uint16_t h; std::memcpy(&h, p, 2); return core::bf16_to_float(h); };
    for (int m = 0; m < C.rows; ++m)
      for (int n = 0; n < C.bytes / 4; ++n) {
        float acc;
        std::memcpy(&acc, C.data[m] + 4 * n, 4);
        for (int k = 0; k < B.rows; ++k)
          acc += bf(A.data[m] + 4 * k) * bf(B.data[k] + 4 * n) + bf(A.data[m] + 4 * k + 2) * bf(B.data[k] + 4 * n + 2);
        std::memcpy(C.data[m] + 4 * n, &acc, 4);
      }
  }
  static void promote_row(const float* p, const float* cols, float row, bool init, float* c) {
    amx::promote_row(p, cols, row, init, c);
  }
  static void release() { configured = false; }
  static void prefetch(const void*, int) {}
};

// L0A as load_l1_to_l0a writes it for AMX, from the Nz L0A the scalar kernel reads.
std::vector<uint16_t> k32(const std::vector<uint16_t>& nz, int64_t m_pad, int64_t k_pad) {
  namespace host = deepgemm_ascend::tile::host;
  std::vector<uint16_t> out(nz.size(), 0xFFFF);
  for (int64_t kb = 0; kb < k_pad / 16; ++kb) {
    const host::L0AFractal f = host::l0a_fractal(kb, m_pad, k_pad, host::kK32Group);
    for (int64_t r = 0; r < m_pad; ++r)
      std::memcpy(&out[size_t(f.offset + r * f.row_stride)], &nz[size_t((kb * m_pad + r) * 16)], 32);
  }
  for (uint16_t v : out) EXPECT_NE(v, 0xFFFF) << "a K32 position no fractal fills";
  return out;
}

void compare_with_scalar(int64_t m_pad, int64_t n_pad, int64_t k_pad, bool init, bool scaled = false) {
  auto a = dga_test::random_bf16(size_t(m_pad * k_pad), 11), b = dga_test::random_bf16(size_t(n_pad * k_pad), 12);
  std::vector<float> c_model(size_t(m_pad * n_pad)), c_ref;
  for (size_t i = 0; i < c_model.size(); ++i) c_model[i] = float(i % 7) - 3.0f;
  c_ref = c_model;
  std::vector<float> rows(static_cast<size_t>(m_pad)), cols(static_cast<size_t>(n_pad));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.5f + float(i % 3);
  for (size_t i = 0; i < cols.size(); ++i) cols[i] = 0.25f * float(1 + i % 5);
  const float* rs = scaled ? rows.data() : nullptr;
  const float* cs = scaled ? cols.data() : nullptr;
  amx::mmad_bf16<ModelTiles>({.c = c_model.data(), .a = k32(a, m_pad, k_pad).data(), .b = b.data(), .m_pad = m_pad,
                              .n_pad = n_pad, .k_pad = k_pad, .init = init, .row_scale = rs, .col_scale = cs});
  deepgemm_ascend::tile::host::mmad_bf16_scalar({.c = c_ref.data(), .a = a.data(), .b = b.data(), .m_pad = m_pad,
                                                 .n_pad = n_pad, .k_pad = k_pad, .init = init, .row_scale = rs,
                                                 .col_scale = cs});
  for (size_t i = 0; i < c_ref.size(); ++i)
    ASSERT_NEAR(c_model[i], c_ref[i], 1e-3f * (1.0f + std::fabs(c_ref[i]))) << "element " << i;
}

}  // namespace

TEST(AmxModel, MatchesScalarKernelOnEveryBlockShape) {
  // 1 or 2 fractal rows / columns per block, odd counts leave 1-wide remainders; K in steps of 32 with
  // and without an odd last fractal of 16.
  for (int64_t m : {16, 32, 48, 80})
    for (int64_t n : {16, 32, 48})
      for (int64_t k : {16, 48, 64, 80}) compare_with_scalar(m, n, k, true);
}

TEST(AmxModel, AccumulatesIntoExistingC) {
  compare_with_scalar(48, 32, 96, false);
  compare_with_scalar(48, 32, 112, false);
}

TEST(AmxModel, PromotesScaledProducts) {
  compare_with_scalar(48, 48, 32, true, true);
  compare_with_scalar(32, 16, 128, false, true);
}

// B's 16-column panels further apart than in L0B (read where they lie in L1's K-pair panels): the same bits.
TEST(AmxModel, ReadsBPanelsAtAnyStride) {
  constexpr int64_t kGap = 3 * 16 * 16;
  for (int64_t n : {16, 48})
    for (int64_t k : {48, 64}) {
      const int64_t m = 32;
      const auto a = k32(dga_test::random_bf16(size_t(m * k), 21), m, k), b = dga_test::random_bf16(size_t(n * k), 22);
      std::vector<uint16_t> wide(size_t(n / 16 * (k * 16 + kGap)), 0x7FC0);  // NaN gaps
      for (int64_t nb = 0; nb < n / 16; ++nb)
        std::copy_n(b.begin() + nb * k * 16, k * 16, wide.begin() + nb * (k * 16 + kGap));
      std::vector<float> packed(size_t(m * n)), spread(size_t(m * n));
      amx::mmad_bf16<ModelTiles>({.c = packed.data(), .a = a.data(), .b = b.data(), .m_pad = m, .n_pad = n, .k_pad = k,
                                  .init = true});
      deepgemm_ascend::tile::host::MmadArgs args{.c = spread.data(), .a = a.data(), .b = wide.data(), .m_pad = m,
                                                 .n_pad = n, .k_pad = k, .init = true};
      args.b_panel = k * 16 + kGap;
      amx::mmad_bf16<ModelTiles>(args);
      EXPECT_EQ(packed, spread) << m << "x" << n << "x" << k;
    }
}

TEST(AmxModel, ReleasesTileState) {
  std::vector<uint16_t> a(256, 0x3F80), b(256, 0x3F80);
  std::vector<float> c(256);
  amx::mmad_bf16<ModelTiles>({.c = c.data(), .a = a.data(), .b = b.data(), .m_pad = 16, .n_pad = 16, .k_pad = 16,
                              .init = true});
  EXPECT_FALSE(ModelTiles::configured);
  EXPECT_FLOAT_EQ(c[0], 16.0f);
}
