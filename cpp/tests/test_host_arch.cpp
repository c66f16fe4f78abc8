// The host Arch follows the machine's caches: L1 = L2, L0A = L0B = L2 / 4, L0C = L2 / 2 (within bounds);
// the tiler sees each micro-kernel's share of them.
#include <gtest/gtest.h>

#include <algorithm>

#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"

namespace rt = deepgemm_ascend::runtime;
using deepgemm_ascend::arch::Host;
using deepgemm_ascend::tile::Pos;

TEST(HostArch, CachesArePlausible) {
  const rt::HostCaches& c = rt::host_caches();
  EXPECT_GE(c.l1d, 4 * 1024);
  EXPECT_GE(c.l2, c.l1d);
  if (c.l3 > 0) EXPECT_GE(c.l3, c.l2);
}

TEST(HostArch, BuffersFollowTheCacheRules) {
  const rt::HostCaches& c = rt::host_caches();
  const auto& s = rt::host_buffer_spec();
  EXPECT_EQ(s.bytes[int(Pos::kL1)], std::clamp<int64_t>(c.l2, Host::kMinL1Bytes, Host::kMaxL1Bytes));
  EXPECT_EQ(s.bytes[int(Pos::kL0A)], std::clamp<int64_t>(c.l2 / Host::kL0PerL2, Host::kMinL0Bytes, Host::kMaxL0Bytes));
  EXPECT_EQ(s.bytes[int(Pos::kL0B)], s.bytes[int(Pos::kL0A)]);
  EXPECT_EQ(s.bytes[int(Pos::kL0C)], std::clamp<int64_t>(c.l2 / Host::kL0CPerL2, Host::kMinL0Bytes, Host::kMaxL1Bytes));
  // Alignment rules and event ids stay those of the Arch tag.
  EXPECT_EQ(s.align[int(Pos::kL0A)], Host::kL0AAlign);
  EXPECT_EQ(s.event_ids, Host::kUserEventIds);
}

TEST(HostArch, HeuristicsSeeEachKernelsShareOfTheCapacities) {
  const rt::HostCaches& c = rt::host_caches();
  const auto& s = rt::host_buffer_spec();
  const Host::KernelTiling* rules[] = {&Host::kAvx512Tiling, &Host::kAvx2Tiling, &Host::kAvx512FmaTiling, &Host::kAvx512Tiling,
                                       &Host::kAmxTiling};
  for (const deepgemm_ascend::tile::host::HostIsa isa : deepgemm_ascend::tile::host::supported_host_isas()) {
    const Host::KernelTiling* rule = rules[int(isa)];
    deepgemm_ascend::tile::host::set_host_isa(isa);
    const auto l = rt::host_arch_limits();
    EXPECT_EQ(l.l1, s.bytes[int(Pos::kL1)]);
    EXPECT_EQ(l.l0a, s.bytes[int(Pos::kL0A)]);
    EXPECT_EQ(l.l0b, s.bytes[int(Pos::kL0B)]);
    EXPECT_EQ(l.l0c, std::clamp<int64_t>(c.l2 / rule->l0c_per_l2, Host::kMinL0Bytes, Host::kMaxL1Bytes));
    EXPECT_LE(l.l0c, s.bytes[int(Pos::kL0C)]);
    EXPECT_EQ(l.max_block_mn, rule->max_block_mn);
    EXPECT_EQ(l.max_block_k, rule->max_block_k);
    EXPECT_EQ(l.accumulator_traffic_per_l0_step, rule->accumulator_traffic_per_l0_step);
  }
  deepgemm_ascend::tile::host::reset_host_isa();
}
