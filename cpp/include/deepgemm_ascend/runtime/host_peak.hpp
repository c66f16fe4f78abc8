// The host's measured peak: the active ISA's micro-kernel instruction on registers only, on every core
// the host backend uses at once (host/micro_kernels.hpp's calibration loops), so that benchmarks can
// report a kernel's fraction of what this machine does, not of a data-sheet number.
#pragma once

#include <string>

namespace deepgemm_ascend::runtime {

struct HostPeak {
  std::string isa;       // the host ISA whose loop ran
  int cores = 0;         // cores that ran it at once
  double tflops = 0.0;   // best of the rounds, all cores together
  double seconds = 0.0;  // wall time of the whole measurement
};

// About `budget_s` seconds of loops (a few rounds; the best counts).
HostPeak measure_host_peak(double budget_s = 0.2);

}  // namespace deepgemm_ascend::runtime
