#include "deepgemm_ascend/runtime/cpu_features.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/core/error.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define DGA_X86 1
#else
#define DGA_X86 0
#endif

namespace deepgemm_ascend::runtime {

namespace {
// Every host ISA, best first: the order supported_host_isas() keeps.
constexpr HostIsa kHostIsasBestFirst[] = {HostIsa::kAmxBf16, HostIsa::kAvx512Bf16, HostIsa::kAvx512, HostIsa::kAvx2,
                                          HostIsa::kScalar};
}  // namespace

const char* name(HostIsa isa) {
  switch (isa) {
    case HostIsa::kScalar: return "scalar";
    case HostIsa::kAvx2: return "avx2";
    case HostIsa::kAvx512: return "avx512";
    case HostIsa::kAvx512Bf16: return "avx512bf16";
    case HostIsa::kAmxBf16: return "amx";
  }
  return "?";
}

HostIsa parse_host_isa(const std::string& s) {
  for (HostIsa i : kHostIsasBestFirst)
    if (s == name(i)) return i;
  core::fail(core::ErrorKind::kValue, "DGA_HOST_ISA", "unknown host ISA '", s, "' (expected amx, avx512bf16, avx512, avx2 or scalar)");
}

#if DGA_X86
// Linux hands out the AMX tile state only on request, once per process.
static bool request_amx_permission() {
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

static CpuFeatures detect_features() {
  CpuFeatures f;
#if DGA_X86
  unsigned a, b, c, d;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char v[13] = {};
    std::memcpy(v, &b, 4);
    std::memcpy(v + 4, &d, 4);
    std::memcpy(v + 8, &c, 4);
    f.vendor = v;
  }
  bool osxsave = false;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    f.fma = c & (1u << 12);
    osxsave = c & (1u << 27);
  }
  unsigned long long xcr0 = 0;
  if (osxsave) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  f.os_avx512 = (xcr0 & 0xE6) == 0xE6;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = os_avx && (b & (1u << 5));
    f.avx512f = f.os_avx512 && (b & (1u << 16));
    f.avx512bw = f.os_avx512 && (b & (1u << 30));
    f.avx512vl = f.os_avx512 && (b & (1u << 31));
    f.avx512vbmi = f.os_avx512 && (c & (1u << 1));
    f.amx_bf16 = d & (1u << 22);
    f.amx_tile = d & (1u << 24);
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512_bf16 = f.avx512f && (a & (1u << 5));
  f.fma = f.fma && os_avx;
  f.os_amx = f.amx_tile && request_amx_permission();
#endif
  return f;
}

std::vector<std::string> CpuFeatures::names() const {
  std::vector<std::string> n;
  auto add = [&](bool on, const char* s) { if (on) n.emplace_back(s); };
  add(avx2, "avx2");
  add(fma, "fma");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512vbmi, "avx512vbmi");
  add(avx512_bf16, "avx512_bf16");
  add(amx_tile, "amx_tile");
  add(amx_bf16, "amx_bf16");
  return n;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect_features();
  return f;
}

bool host_isa_runs(HostIsa isa) {
  const auto& f = cpu_features();
  switch (isa) {
    case HostIsa::kScalar: return true;
#if DGA_X86
    case HostIsa::kAmxBf16: return f.amx_tile && f.amx_bf16 && f.os_amx && f.avx512f;  // its helpers use AVX-512F
    case HostIsa::kAvx512Bf16: return f.avx512f && f.avx512_bf16;
    case HostIsa::kAvx512: return f.avx512f && f.avx512bw && f.avx512vl && f.fma;  // its helpers use BW and VL
    case HostIsa::kAvx2: return f.avx2 && f.fma;
#endif
    default: return false;
  }
}

std::vector<HostIsa> supported_host_isas() {
  std::vector<HostIsa> v;
  for (HostIsa i : kHostIsasBestFirst)
    if (host_isa_runs(i)) v.push_back(i);
  return v;
}

namespace {
constexpr int kAuto = -1;
std::atomic<int> g_forced{kAuto};

HostIsa checked_isa(HostIsa isa, const char* source) {
  if (!host_isa_runs(isa))
    core::fail(core::ErrorKind::kRuntime, source, "host ISA '", name(isa),
               "' is not available (this CPU lacks it or this build has no micro-kernel for it)");
  return isa;
}

HostIsa env_or_best() {
  static const HostIsa chosen = [] {
    if (const char* e = std::getenv("DGA_HOST_ISA"); e && *e) return checked_isa(parse_host_isa(e), "DGA_HOST_ISA");
    const HostIsa best = supported_host_isas().front();
    if (best == HostIsa::kAvx512 && host_isa_runs(HostIsa::kAvx2) && !avx512_pays(fma_width_race()))
      return HostIsa::kAvx2;
    return best;
  }();
  return chosen;
}
}  // namespace

bool avx512_pays(const FmaWidthRace& race) { return race.avx512 >= arch::Host::kAvx512MinFmaGain * race.avx2; }

HostIsa active_host_isa() {
  const int f = g_forced.load(std::memory_order_relaxed);
  return f == kAuto ? env_or_best() : HostIsa(f);
}

void set_host_isa(HostIsa isa) { g_forced.store(int(checked_isa(isa, "isa"))); }
void reset_host_isa() { g_forced.store(kAuto); }

}  // namespace deepgemm_ascend::runtime
