// Exact widening of every e4m3 / e5m2 / e2m1 code to bf16, on every ISA implementation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/cpu_features.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace core = deepgemm_ascend::core;
namespace host = deepgemm_ascend::tile::host;
using deepgemm_ascend::tile::OperandFormat;

namespace {

float decode(OperandFormat f, uint8_t code) {
  switch (f) {
    case OperandFormat::kE4M3: return core::e4m3_to_float(code);
    case OperandFormat::kE5M2: return core::e5m2_to_float(code);
    default: return core::e2m1_to_float(code);
  }
}

void expect_exact(host::WidenRowsFn fn, OperandFormat f) {
  const int codes = f == OperandFormat::kE2M1 ? 16 : 256;
  // 16 rows of 16 values each, 32 bytes apart, as in an L1 Nz tile.
  std::vector<uint8_t> in(16 * 32, 0xEE);
  std::vector<uint16_t> out(16 * 16, 0xBEEF);
  std::vector<uint8_t> expect_codes(256);
  for (int i = 0; i < 256; ++i) {
    const int code = i % codes;
    expect_codes[size_t(i)] = uint8_t(code);
    const int r = i / 16, c = i % 16;
    if (f == OperandFormat::kE2M1) {
      uint8_t& byte = in[size_t(r * 32 + c / 2)];
      byte = uint8_t(c % 2 ? (byte & 0x0F) | (code << 4) : (byte & 0xF0) | code);
    } else {
      in[size_t(r * 32 + c)] = uint8_t(code);
    }
  }
  fn(f, in.data(), 32, 16, out.data(), 16);
  for (int i = 0; i < 256; ++i) {
    const float want = decode(f, expect_codes[size_t(i)]);
    const float got = core::bf16_to_float(out[size_t(i)]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << int(expect_codes[size_t(i)]);
    } else {
      EXPECT_EQ(std::memcmp(&want, &got, 4), 0) << "code " << int(expect_codes[size_t(i)]) << ": " << got << " vs "
                                                << want;
    }
  }
}

}  // namespace

TEST(Widen, ScalarIsExactForEveryCode) {
  for (auto f : {OperandFormat::kE4M3, OperandFormat::kE5M2, OperandFormat::kE2M1}) expect_exact(&host::widen_rows_scalar, f);
}

TEST(Widen, ActiveIsaIsExactForEveryCode) {
  for (auto isa : deepgemm_ascend::tile::host::supported_host_isas()) {
    deepgemm_ascend::tile::host::set_host_isa(isa);
    for (auto f : {OperandFormat::kE4M3, OperandFormat::kE5M2, OperandFormat::kE2M1}) expect_exact(host::widen_rows_fn(), f);
  }
  deepgemm_ascend::tile::host::reset_host_isa();
}

// Bit for bit, NaN payloads included: every 8-bit code (16 rows of 16) and every e2m1 code.
TEST(Widen, ActiveIsaMatchesTheScalarBitsForEveryCode) {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[size_t(c)] = uint8_t(c);
  std::vector<uint8_t> nibbles(16 * 8);
  for (int i = 0; i < 16 * 8; ++i) nibbles[size_t(i)] = uint8_t((2 * i) % 16 | ((2 * i + 1) % 16) << 4);
  for (auto isa : deepgemm_ascend::tile::host::supported_host_isas()) {
    deepgemm_ascend::tile::host::set_host_isa(isa);
    for (auto f : {OperandFormat::kE4M3, OperandFormat::kE5M2, OperandFormat::kE2M1}) {
      const bool e2m1 = f == OperandFormat::kE2M1;
      const uint8_t* in = e2m1 ? nibbles.data() : codes.data();
      std::vector<uint16_t> got(256, 0xBEEF), want(256, 0xBEEF);
      host::widen_rows_fn()(f, in, e2m1 ? 8 : 16, 16, got.data(), 16);
      host::widen_rows_scalar(f, in, e2m1 ? 8 : 16, 16, want.data(), 16);
      EXPECT_EQ(got, want) << deepgemm_ascend::tile::host::name(isa);
    }
  }
  deepgemm_ascend::tile::host::reset_host_isa();
}

TEST(Widen, OddRowCountsMatchTheScalarReference) {
  std::vector<uint8_t> in(5 * 32);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 37 + 11);
  for (auto isa : deepgemm_ascend::tile::host::supported_host_isas()) {
    deepgemm_ascend::tile::host::set_host_isa(isa);
    for (auto f : {OperandFormat::kE4M3, OperandFormat::kE5M2, OperandFormat::kE2M1})
      for (int64_t rows : {1, 3, 5}) {
        std::vector<uint16_t> got(size_t(rows * 24), 0xBEEF), want(got);
        host::widen_rows_fn()(f, in.data(), 32, rows, got.data(), 24);
        host::widen_rows_scalar(f, in.data(), 32, rows, want.data(), 24);
        EXPECT_EQ(got, want) << "rows " << rows;
        // One contiguous run (rows back to back in and out, as an L0B load of K-pair panels widens them).
        std::vector<uint16_t> run(size_t(rows * 16), 0xBEEF), run_want(run);
        const int64_t in_stride = f == OperandFormat::kE2M1 ? 8 : 16;
        host::widen_rows_fn()(f, in.data(), in_stride, rows, run.data(), 16);
        host::widen_rows_scalar(f, in.data(), in_stride, rows, run_want.data(), 16);
        EXPECT_EQ(run, run_want) << "contiguous, rows " << rows;
      }
  }
  deepgemm_ascend::tile::host::reset_host_isa();
}

// Rows packed back to back in a buffer of exactly their size (8 bytes per e2m1 row, 16 per 8-bit row): an
// implementation must not read past a row's codes (the sanitizer build sees any read beyond the buffer).
TEST(Widen, ReadsOnlyTheRowsCodes) {
  for (auto isa : deepgemm_ascend::tile::host::supported_host_isas()) {
    deepgemm_ascend::tile::host::set_host_isa(isa);
    for (auto f : {OperandFormat::kE4M3, OperandFormat::kE5M2, OperandFormat::kE2M1}) {
      const int64_t row_bytes = f == OperandFormat::kE2M1 ? 8 : 16, rows = 3;
      std::vector<uint8_t> in(size_t(rows * row_bytes));
      for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 53 + 7);
      std::vector<uint16_t> got(size_t(rows * 16), 0xBEEF), want(got);
      host::widen_rows_fn()(f, in.data(), row_bytes, rows, got.data(), 16);
      host::widen_rows_scalar(f, in.data(), row_bytes, rows, want.data(), 16);
      EXPECT_EQ(got, want);
    }
  }
  deepgemm_ascend::tile::host::reset_host_isa();
}

// Both AVX-512 widenings of 8-bit codes, whichever one the CPU picks (byte tables with AVX512-VBMI, word tables
// without): every code, rows strided and back to back, odd row counts, against the scalar reference; and the two
// fold the same steps into the same bits (per row and per K pair).
TEST(Widen, Avx512WordAndByteTablesMatchTheScalarBits) {
  const auto& cpu = deepgemm_ascend::core::cpu_features();
  if (!(cpu.avx512f && cpu.avx512bw && cpu.avx512vl)) GTEST_SKIP() << "no AVX-512 helpers on this CPU";
  std::vector<host::WidenRowsFn> widen{&host::widen_rows_avx512};
  if (cpu.avx512vbmi) widen.push_back(&host::widen_rows_avx512vbmi);
  std::vector<uint8_t> in(17 * 32);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i < 256 ? i : i * 37 + 11);  // every code first
  for (auto f : {OperandFormat::kE4M3, OperandFormat::kE5M2})
    for (host::WidenRowsFn fn : widen)
      for (int64_t rows : {1, 2, 7, 16, 17})
        for (int64_t in_stride : {16, 32}) {
          std::vector<uint16_t> got(size_t(rows * 16), 0xBEEF), want(got);
          fn(f, in.data(), in_stride, rows, got.data(), 16);
          host::widen_rows_scalar(f, in.data(), in_stride, rows, want.data(), 16);
          EXPECT_EQ(got, want) << "rows " << rows << " in_stride " << in_stride;
        }
  if (!cpu.avx512vbmi) return;
  std::vector<uint16_t> step(32);
  for (size_t i = 0; i < step.size(); ++i) step[i] = uint16_t((int(i % 9) - 4) << 7);  // 2^-4 .. 2^4
  for (auto f : {OperandFormat::kE4M3, OperandFormat::kE5M2})
    for (bool per_row : {false, true})
      for (int64_t rows : {1, 2, 15, 16}) {
        std::vector<uint16_t> bytes(size_t(rows * 24), 0xBEEF), words(bytes);
        host::widen_fold_avx512vbmi(f, in.data(), 32, rows, bytes.data(), 24, step.data(), per_row);
        host::widen_fold_avx512(f, in.data(), 32, rows, words.data(), 24, step.data(), per_row);
        EXPECT_EQ(bytes, words) << "rows " << rows << " per_row " << per_row;
      }
}
