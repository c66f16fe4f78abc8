// The K-pair interleave of 16 rows of B, on every ISA implementation: pair word p of row n at out[p*16+n].
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace host = deepgemm_ascend::tile::host;

namespace {

// Every value distinct and its position readable: row n, K index k -> (n << 8) | k | 0x4000.
void expect_interleaved(host::InterleaveFn fn, int64_t stride) {
  std::vector<uint16_t> in(size_t(16 * stride), 0xEEEE);
  for (int n = 0; n < 16; ++n)
    for (int k = 0; k < 16; ++k) in[size_t(n * stride + k)] = uint16_t(0x4000 | n << 8 | k);
  std::vector<uint32_t> out(16 * 8, 0xDEADBEEF);
  fn(in.data(), stride, out.data());
  for (int p = 0; p < 8; ++p)
    for (int n = 0; n < 16; ++n) {
      const uint32_t want = uint32_t(0x4000 | n << 8 | 2 * p) | uint32_t(0x4000 | n << 8 | (2 * p + 1)) << 16;
      ASSERT_EQ(out[size_t(p * 16 + n)], want) << "pair " << p << ", row " << n << ", stride " << stride;
    }
}

}  // namespace

TEST(Interleave, ScalarPutsPairWordsColumnByColumn) {
  for (int64_t stride : {16, 32}) expect_interleaved(&host::interleave_k_pairs_scalar, stride);
}

TEST(Interleave, EverySupportedIsaMatches) {
  for (auto isa : deepgemm_ascend::tile::host::supported_host_isas()) {
    deepgemm_ascend::tile::host::set_host_isa(isa);
    // 16: contiguous rows; the others: rows of a GM matrix (copy_gm_to_l1b).
    for (int64_t stride : {16, 32, 24, 100}) expect_interleaved(host::interleave_k_pairs_fn(), stride);
  }
  deepgemm_ascend::tile::host::reset_host_isa();
}
