// The numbers an NPU launch is planned with, from the Arch tag of the arch its kernels are built for
// (arch/, DGA_NPU_ARCHS): the tiler's limits, the vector cores' UB, the cores of a group. The dispatch
// asks the launch's device for its NpuArch (api::NpuDevice::arch) and plans with nothing else.
#pragma once

#include <cstdint>
#include <string>

#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"

namespace deepgemm_ascend::heuristics {

struct NpuArch {
  const char* target;  // the kernels' --npu-arch, e.g. dav-3510
  ArchLimits limits;   // the cube core's buffers and the performance model
  int64_t ub_bytes;    // one vector core's UB
  int64_t ub_align;    // a UB run's alignment: the shortest run a vector instruction scales at once
  int vector_cores_per_cube;
  int default_cube_cores;  // the instruction model's cores (a device is asked for its own)

  template <class Arch>
  static NpuArch of() {
    return {Arch::kTarget,        ArchLimits::of<Arch>(),   int64_t(Arch::kUBBytes), int64_t(Arch::kUBAlign),
            Arch::kVectorCoresPerCube, Arch::kDefaultCubeCores};
  }
};

// The arch whose target is `target`; fails for an arch the NPU kernels are not built for.
const NpuArch& npu_arch(const std::string& target);

}  // namespace deepgemm_ascend::heuristics
