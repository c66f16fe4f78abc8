// The NPU launchers (dga_npu_launch_gemm_<family>[_<kind>] of cpp/kernels/ascend/*.asc) on the instruction
// model: the same run_* templates the .asc kernels call, compiled with the host compiler against the
// devkit headers in CPU-debug mode (cube core), run core after core with the model's checks. The cube-only
// families run; the promoted FP8 family (a mix kernel: cube and vector cores exchange flags) is refused
// until the model runs a group's cores together. Our reading of the documentation, not the 950.
#include <cstring>
#include <exception>
#include <string>

#include "npu_gemm_launch.hpp"
#include "model_types.h"

#include "deepgemm_ascend/core/error.hpp"
#include "model_runner.hpp"
#include "npu_model_launch.h"

namespace npu = deepgemm_ascend::tile::npu;

namespace {

using Run = void (*)(const void*);

template <class Elem, npu::Scales S>
void dense(const void* p) { npu::run_gemm<Elem, S>(*static_cast<const DgaGemmParams*>(p)); }
template <class Elem, npu::Scales S>
void masked(const void* p) { npu::run_masked_gemm<Elem, S>(*static_cast<const DgaMaskedGemmParams*>(p)); }
template <class Elem, npu::Scales S>
void contiguous(const void* p) { npu::run_contiguous_gemm<Elem, S>(*static_cast<const DgaContiguousGemmParams*>(p)); }
template <class Elem, npu::Scales S>
void k_grouped(const void* p) { npu::run_k_grouped_gemm<Elem, S>(*static_cast<const DgaKGroupedGemmParams*>(p)); }

struct Entry {
  const char* name;
  Run run;
};

// The four launchers of a family, named as in its .asc file.
#define DGA_MODEL_FAMILY(name, Elem, S)                                                    \
  {"dga_npu_launch_gemm_" name, &dense<Elem, S>},                                          \
      {"dga_npu_launch_gemm_" name "_masked", &masked<Elem, S>},                           \
      {"dga_npu_launch_gemm_" name "_contiguous", &contiguous<Elem, S>},                   \
      {"dga_npu_launch_gemm_" name "_k_grouped", &k_grouped<Elem, S>}

const Entry kEntries[] = {
    DGA_MODEL_FAMILY("bf16", bfloat16_t, npu::Scales::kNone),
    DGA_MODEL_FAMILY("fp8_mx", fp8_e4m3fn_t, npu::Scales::kMx),
    DGA_MODEL_FAMILY("fp4_mx", fp4x2_e2m1_t, npu::Scales::kMx),
};

// The kernel name of a launcher (the .asc kernel the launcher starts).
std::string kernel_name(const std::string& entry) {
  const std::string prefix = "dga_npu_launch_";
  return "dga_" + entry.substr(prefix.size());
}

int report(char* err, size_t len, const std::string& msg, int rc) {
  if (len > 0) {
    std::strncpy(err, msg.c_str(), len - 1);
    err[len - 1] = '\0';
  }
  return rc;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int dga_npu_model_launch(const char* entry, unsigned blocks,
                                                                           const void* params, char* err, size_t len) {
  constexpr int kError = -1, kRefused = -2;
  const std::string name = entry;
  Run run = nullptr;
  for (const Entry& e : kEntries)
    if (name == e.name) run = e.run;
  if (run == nullptr) {
    const bool promoted = name.rfind("dga_npu_launch_gemm_fp8_block", 0) == 0;
    return report(err, len,
                  promoted ? "the promoted FP8 kernel (a mix kernel: the cube sends each K block's product to its "
                             "vector cores) does not run on the instruction model yet: the model runs cube-only "
                             "kernels, core after core"
                           : "no such NPU launcher on the instruction model",
                  kRefused);
  }
  block_num = int64_t(blocks);
  for (unsigned core = 0; core < blocks; ++core) {
    block_idx = int64_t(core);
    try {
      dga_model::begin_core(kernel_name(name), int(core));
      run(params);
      dga_model::end_core();
    } catch (const deepgemm_ascend::core::Error& e) {
      return report(err, len, e.what(), e.kind() == deepgemm_ascend::core::ErrorKind::kNotImplemented ? kRefused : kError);
    } catch (const std::exception& e) {
      return report(err, len, std::string("core ") + std::to_string(core) + ": " + e.what(), kError);
    }
  }
  return 0;
}
