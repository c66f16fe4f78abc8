// The host CPU's features (cpuid, the OS's AVX-512 / AMX state).
#pragma once

#include <string>
#include <vector>

namespace deepgemm_ascend::core {

struct CpuFeatures {
  std::string vendor;
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512_bf16 = false;
  bool avx512vbmi = false;  // byte permutes (vpermt2b): the AVX-512 widening's byte tables
  bool amx_tile = false, amx_bf16 = false;
  bool os_avx512 = false;                  // XCR0 enables opmask and ZMM state
  bool os_amx = false;                     // the kernel granted this process the AMX tile state
  std::vector<std::string> names() const;  // the features present, for `deepgemm-ascend info`
};

const CpuFeatures& cpu_features();

}  // namespace deepgemm_ascend::core
