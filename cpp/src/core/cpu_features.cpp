#include "deepgemm_ascend/core/cpu_features.hpp"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define DGA_X86 1
#else
#define DGA_X86 0
#endif

namespace deepgemm_ascend::core {

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
  auto add = [&](bool on, const char* s) {
    if (on) n.emplace_back(s);
  };
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

}  // namespace deepgemm_ascend::core
