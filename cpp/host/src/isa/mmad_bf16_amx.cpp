// AMX-BF16 cube micro-kernel on the hardware tiles (only this file is compiled with AMX flags).
#include <immintrin.h>

#include <cstring>
#include <cstdlib>

#include "amx_body.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace deepgemm_ascend::tile::host {

namespace {

constexpr int kCacheLine = 64;

// The AMX intrinsics paste the tile number into the instruction text, so every call needs a literal.
#define DGA_EACH_TILE(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

struct HardwareTiles {
  struct alignas(64) Config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
  };
  static void configure(const amx::TileShape (&shapes)[8]) {
    Config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; ++t) {
      cfg.rows[t] = uint8_t(shapes[t].rows);
      cfg.colsb[t] = uint16_t(shapes[t].bytes);
    }
    _tile_loadconfig(&cfg);
  }
  static void zero(int t) {
    switch (t) {
#define DGA_ZERO(n) case n: _tile_zero(n); break;
      DGA_EACH_TILE(DGA_ZERO)
#undef DGA_ZERO
    }
  }
  static void load(int t, const void* p, int stride) {
    switch (t) {
#define DGA_LOAD(n) case n: _tile_loadd(n, p, stride); break;
      DGA_EACH_TILE(DGA_LOAD)
#undef DGA_LOAD
    }
  }
  static void store(int t, void* p, int stride) {
    switch (t) {
#define DGA_STORE(n) case n: _tile_stored(n, p, stride); break;
      DGA_EACH_TILE(DGA_STORE)
#undef DGA_STORE
    }
  }
  // The body only pairs C tile 2i + j with A tile 4 + i and B tile 6 + j.
  static void dpbf16(int c, int a, int b) {
    if (a != amx::kATile0 + c / 2 || b != amx::kBTile0 + c % 2) std::abort();
    switch (c) {
      case 0: _tile_dpbf16ps(0, 4, 6); break;
      case 1: _tile_dpbf16ps(1, 4, 7); break;
      case 2: _tile_dpbf16ps(2, 5, 6); break;
      default: _tile_dpbf16ps(3, 5, 7); break;
    }
  }
  // c (=|+=) p * (row * cols), 16 values: amx::promote_row in one register.
  static void promote_row(const float* p, const float* cols, float row, bool init, float* c) {
    const __m512 v = _mm512_loadu_ps(p), s = _mm512_mul_ps(_mm512_set1_ps(row), _mm512_loadu_ps(cols));
    _mm512_storeu_ps(c, init ? _mm512_mul_ps(v, s) : _mm512_fmadd_ps(v, s, _mm512_loadu_ps(c)));
  }
  static void release() { _tile_release(); }
  static void prefetch(const void* p, int bytes) {
    for (int o = 0; o < bytes; o += kCacheLine) _mm_prefetch(static_cast<const char*>(p) + o, _MM_HINT_T0);
  }
};

}  // namespace

void mmad_bf16_amx(const MmadArgs& args) { amx::mmad_bf16<HardwareTiles>(args); }

// Calibration: the micro-kernel's tile configuration, four TDPBF16PS per iteration on register tiles.
double peak_loop_amx(int64_t iters) {
  alignas(64) static const uint16_t zeros[amx::kBlock * amx::kTileK] = {};
  HardwareTiles::configure(amx::kTileShapes);
  for (int t = 0; t < 4; ++t) HardwareTiles::zero(t);
  for (int t = 4; t < 8; ++t) HardwareTiles::load(t, zeros, amx::kARowBytes);
  for (int64_t it = 0; it < iters; ++it)
    for (int c = 0; c < 4; ++c) HardwareTiles::dpbf16(c, amx::kATile0 + c / 2, amx::kBTile0 + c % 2);
  alignas(64) float out[amx::kBlock * amx::kBlock];
  HardwareTiles::store(0, out, amx::kCRowBytes);
  HardwareTiles::release();
  volatile float sink = out[0];
  (void)sink;
  return double(iters) * 4 * amx::kBlock * amx::kBlock * amx::kTileK * 2;
}

}  // namespace deepgemm_ascend::tile::host
