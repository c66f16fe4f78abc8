#include "deepgemm_ascend/heuristics/npu_arch.hpp"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::heuristics {

const NpuArch& npu_arch(const std::string& target) {
  // Every arch the NPU kernels are written for; a new arch is a new Arch tag and an entry here.
  static const NpuArch kArchs[] = {NpuArch::of<arch::Ascend950>()};
  for (const NpuArch& a : kArchs)
    if (target == a.target) return a;
  core::fail(core::ErrorKind::kNotImplemented, "device", "no NPU plan for arch ", target,
             " (the kernels are written for ", arch::Ascend950::kTarget, ")");
}

}  // namespace deepgemm_ascend::heuristics
