#include "deepgemm_ascend/runtime/host_arch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"

namespace deepgemm_ascend::runtime {

namespace {

// sysfs size strings look like "48K" or "2048K" or "32M".
int64_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  int64_t v = std::atoll(s.c_str());
  const char unit = s.find_first_of("KMG") == std::string::npos ? ' ' : s[s.find_first_of("KMG")];
  return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : unit == 'G' ? v << 30 : v;
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// Data or unified cache of `level` for cpu0, from sysfs.
int64_t sysfs_cache(int level) {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string lv = read_line(dir + "level"), type = read_line(dir + "type");
    if (lv.empty()) break;
    if (std::atoi(lv.c_str()) == level && type != "Instruction") return parse_size(read_line(dir + "size"));
  }
  return 0;
}

int64_t cache_size(int level, int sysconf_name) {
  const long v = sysconf(sysconf_name);
  return v > 0 ? int64_t(v) : sysfs_cache(level);
}

HostCaches detect_caches() {
  HostCaches c;
  c.l1d = cache_size(1, _SC_LEVEL1_DCACHE_SIZE);
  c.l2 = cache_size(2, _SC_LEVEL2_CACHE_SIZE);
  c.l3 = cache_size(3, _SC_LEVEL3_CACHE_SIZE);
  c.from_system = c.l1d > 0 && c.l2 > 0;
  if (c.l1d <= 0) c.l1d = arch::Host::kDefaultL1dBytes;
  if (c.l2 <= 0) c.l2 = arch::Host::kDefaultL2Bytes;
  return c;
}

uint32_t clamp_bytes(int64_t v, uint32_t lo, uint32_t hi) { return uint32_t(std::clamp<int64_t>(v, lo, hi)); }

HostArch read_host_arch() {
  const char* v = std::getenv("DGA_HOST_ARCH");
  const std::string s = v ? v : "";
  if (s.empty() || s == "host") return HostArch::kHost;
  if (s == "ascend950") return HostArch::kAscend950;
  core::fail(core::ErrorKind::kValue, "DGA_HOST_ARCH", "expected 'host' or 'ascend950', got '", s, "'");
}

tile::host::BufferSpec make_spec() {
  if (host_arch() == HostArch::kAscend950) return tile::host::BufferSpec::of<arch::Ascend950>();
  using H = arch::Host;
  const HostCaches& c = host_caches();
  tile::host::BufferSpec s = tile::host::BufferSpec::of<H>();
  s.bytes[int(tile::Pos::kL1)] = clamp_bytes(c.l2, H::kMinL1Bytes, H::kMaxL1Bytes);
  s.bytes[int(tile::Pos::kL0A)] = s.bytes[int(tile::Pos::kL0B)] =
      clamp_bytes(c.l2 / H::kL0PerL2, H::kMinL0Bytes, H::kMaxL0Bytes);
  s.bytes[int(tile::Pos::kL0C)] = clamp_bytes(c.l2 / H::kL0CPerL2, H::kMinL0Bytes, H::kMaxL1Bytes);
  return s;
}

// How the active micro-kernel wants its tiles (arch/host.hpp, measured per ISA).
const arch::Host::KernelTiling& kernel_tiling(tile::host::HostIsa isa) {
  switch (isa) {
    case tile::host::HostIsa::kAmxBf16: return arch::Host::kAmxTiling;
    case tile::host::HostIsa::kAvx2: return arch::Host::kAvx2Tiling;
    case tile::host::HostIsa::kAvx512: return arch::Host::kAvx512FmaTiling;
    default: return arch::Host::kAvx512Tiling;
  }
}

}  // namespace

const HostCaches& host_caches() {
  static const HostCaches c = detect_caches();
  return c;
}

HostArch host_arch() {
  static const HostArch a = read_host_arch();
  return a;
}

const char* name(HostArch a) { return a == HostArch::kAscend950 ? "ascend950" : "host"; }

int planning_cores() {
  return host_arch() == HostArch::kAscend950 ? arch::Ascend950::kDefaultCubeCores : host_backend().num_ai_cores();
}

const tile::host::BufferSpec& host_buffer_spec() {
  static const tile::host::BufferSpec s = make_spec();
  return s;
}

heuristics::ArchLimits host_arch_limits() {
  if (host_arch() == HostArch::kAscend950) return heuristics::ArchLimits::of<arch::Ascend950>();
  heuristics::ArchLimits l = heuristics::ArchLimits::of<arch::Host>();
  const tile::host::BufferSpec& s = host_buffer_spec();
  l.l1 = s.bytes[int(tile::Pos::kL1)];
  l.l0a = s.bytes[int(tile::Pos::kL0A)];
  l.l0b = s.bytes[int(tile::Pos::kL0B)];
  l.l0c = s.bytes[int(tile::Pos::kL0C)];
  using H = arch::Host;
  const H::KernelTiling& kt = kernel_tiling(tile::host::active_host_isa());
  static_assert(H::kAmxTiling.l0c_per_l2 >= H::kL0CPerL2 && H::kAvx2Tiling.l0c_per_l2 >= H::kL0CPerL2 &&
                    H::kAvx512FmaTiling.l0c_per_l2 >= H::kL0CPerL2 &&
                    H::kAvx512Tiling.l0c_per_l2 >= H::kL0CPerL2,
                "a kernel's L0C budget must fit the L0C buffer");
  l.l0c = std::min<uint64_t>(l.l0c, clamp_bytes(host_caches().l2 / kt.l0c_per_l2, H::kMinL0Bytes, H::kMaxL1Bytes));
  l.accumulator_traffic_per_l0_step = kt.accumulator_traffic_per_l0_step;
  l.max_block_mn = kt.max_block_mn;
  l.max_block_k = kt.max_block_k;
  return l;
}

}  // namespace deepgemm_ascend::runtime
