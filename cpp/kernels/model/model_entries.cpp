// The NPU launchers (dga_npu_launch_gemm_<family>[_<kind>] of cpp/kernels/ascend/*.asc) on the instruction
// model: the same run_* templates the .asc kernels call, compiled with the host compiler against the
// devkit headers in CPU-debug mode (mix mode: the core type is chosen at run time), run with the model's
// checks: a cube-only kernel's cores one after the other, a mix kernel's groups (the cube core and its two
// vector cores, which exchange cross-core flags) one after the other, each as threads that take turns.
// Our reading of the documentation, not the 950.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "npu_gemm_launch.hpp"
#include "npu_convert.hpp"
#include "npu_hc_vector.hpp"
#include "npu_mqa_launch.hpp"
#include "npu_swiglu.hpp"
#include "npu_mega_moe.hpp"
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

template <class Elem>
void mqa_logits(const void* p) { npu::run_mqa_logits<Elem>(*static_cast<const DgaMqaParams*>(p)); }
template <class Elem>
void paged_mqa_logits(const void* p) { npu::run_paged_mqa_logits<Elem>(*static_cast<const DgaPagedMqaParams*>(p)); }
void convert_rows(const void* p) { npu::run_convert_rows(*static_cast<const DgaConvertParams*>(p)); }
template <npu::MegaMoeStep S>
void mega_moe(const void* p) { npu::run_mega_moe<S>(*static_cast<const DgaMegaMoeParams*>(p)); }
void swiglu(const void* p) { npu::run_swiglu(*static_cast<const DgaSwigluParams*>(p)); }
void hc_prenorm_vector(const void* p) { npu::run_hc_prenorm_vector(*static_cast<const DgaHcPrenormParams*>(p)); }

enum class Cores { kCube, kMix, kVector };  // AIC only; each cube core with its two vector cores; AIV only

struct Entry {
  const char* name;
  Run run;
  Cores cores = Cores::kCube;
};

// The four launchers of a family, named as in its .asc file.
#define DGA_MODEL_FAMILY(name, Elem, S, cores)                                             \
  {"dga_npu_launch_gemm_" name, &dense<Elem, S>, cores},                                   \
      {"dga_npu_launch_gemm_" name "_masked", &masked<Elem, S>, cores},                    \
      {"dga_npu_launch_gemm_" name "_contiguous", &contiguous<Elem, S>, cores},            \
      {"dga_npu_launch_gemm_" name "_k_grouped", &k_grouped<Elem, S>, cores}

const Entry kEntries[] = {
    DGA_MODEL_FAMILY("bf16", bfloat16_t, npu::Scales::kNone, Cores::kCube),
    DGA_MODEL_FAMILY("fp8_mx", fp8_e4m3fn_t, npu::Scales::kMx, Cores::kCube),
    DGA_MODEL_FAMILY("fp4_mx", fp4x2_e2m1_t, npu::Scales::kMx, Cores::kCube),
    DGA_MODEL_FAMILY("fp8_block", fp8_e4m3fn_t, npu::Scales::kPromoted, Cores::kMix),
    {"dga_npu_launch_hc_prenorm_vector", &hc_prenorm_vector, Cores::kVector},
    {"dga_npu_launch_convert_rows", &convert_rows, Cores::kVector},
    {"dga_npu_launch_swiglu", &swiglu, Cores::kVector},
    {"dga_npu_launch_mega_moe_dispatch_barrier", &mega_moe<npu::MegaMoeStep::kDispatchBarrier>, Cores::kVector},
    {"dga_npu_launch_mega_moe_route", &mega_moe<npu::MegaMoeStep::kRoute>, Cores::kVector},
    {"dga_npu_launch_mega_moe_gather", &mega_moe<npu::MegaMoeStep::kGather>, Cores::kVector},
    {"dga_npu_launch_mega_moe_scatter", &mega_moe<npu::MegaMoeStep::kScatter>, Cores::kVector},
    {"dga_npu_launch_mega_moe_combine_barrier", &mega_moe<npu::MegaMoeStep::kCombineBarrier>, Cores::kVector},
    {"dga_npu_launch_mega_moe_combine", &mega_moe<npu::MegaMoeStep::kCombine>, Cores::kVector},
    {"dga_npu_launch_mqa_logits_fp8", &mqa_logits<fp8_e4m3fn_t>, Cores::kMix},
    {"dga_npu_launch_paged_mqa_logits_fp8", &paged_mqa_logits<fp8_e4m3fn_t>, Cores::kMix},
    {"dga_npu_launch_mqa_logits_fp4", &mqa_logits<fp4x2_e2m1_t>, Cores::kMix},
    {"dga_npu_launch_paged_mqa_logits_fp4", &paged_mqa_logits<fp4x2_e2m1_t>, Cores::kMix},
};

// A core's UB on the model (the devkit keeps one per process): aligned like the devkit's buffers.
struct UbBuffer {
  static constexpr size_t kAlign = 4096;
  explicit UbBuffer(size_t bytes)
      : p(static_cast<uint8_t*>(std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign))) {}
  ~UbBuffer() { std::free(p); }
  UbBuffer(const UbBuffer&) = delete;
  UbBuffer& operator=(const UbBuffer&) = delete;
  uint8_t* p;
};

// The devkit's per-core globals, swapped when the model switches between the cores of a group: the
// core type and indices (GetBlockIdx on an AIV is block_idx * g_taskRation + sub_block_idx), the core's
// TPipe and its UB.
void run_mix(const std::string& kernel, unsigned groups, Run run, const void* params) {
  constexpr int kSlots = 3, kSubBlocks = 2;
  auto& cd = AscendC::ConstDefiner::Instance();
  const size_t ub_bytes = cd.bufferInitLen.at(AscendC::Hardware::UB);
  UbBuffer ub[kSlots] = {UbBuffer(ub_bytes), UbBuffer(ub_bytes), UbBuffer(ub_bytes)};
  const uint8_t* const bases[kSlots] = {ub[0].p, ub[1].p, ub[2].p};
  uint8_t* const process_ub = cd.cpuUB;
  block_num = int64_t(groups);
  g_taskRation = kSubBlocks;
  struct Restore {
    uint8_t* ub;
    ~Restore() {
      auto& c = AscendC::ConstDefiner::Instance();
      c.cpuUB = ub, c.hardwareCpuBufferMap[AscendC::Hardware::UB] = ub;
      g_coreType = AscendC::AIC, g_taskRation = 1, sub_block_idx = 0, g_tPipePtr = nullptr;
    }
  } restore{process_ub};
  for (unsigned g = 0; g < groups; ++g) {
    AscendC::TPipe* pipes[kSlots] = {};
    int last = -1;
    const auto switch_core = [&](int s) {
      if (last >= 0) pipes[last] = g_tPipePtr;
      g_tPipePtr = pipes[s];
      block_idx = int64_t(g), sub_block_idx = s == 0 ? 0 : s - 1;
      g_coreType = s == 0 ? AscendC::AIC : AscendC::AIV;
      cd.cpuUB = ub[s].p, cd.hardwareCpuBufferMap[AscendC::Hardware::UB] = ub[s].p;
      last = s;
    };
    dga_model::run_group(kernel, int(g), bases, switch_core, [&](int) { run(params); });
  }
}

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

// An error inside a run (an instruction the model does not implement included) is a model error: the
// kernels must run on the model, so it is reported as such (RuntimeError), never as a missing kernel.
extern "C" __attribute__((visibility("default"))) int dga_npu_model_launch(const char* entry, unsigned blocks,
                                                                           const void* params, char* err, size_t len) {
  constexpr int kError = -1, kRefused = -2;
  const std::string name = entry;
  const Entry* found = nullptr;
  for (const Entry& e : kEntries)
    if (name == e.name) found = &e;
  if (found == nullptr) return report(err, len, "no such NPU launcher on the instruction model", kRefused);
  const Run run = found->run;
  if (found->cores == Cores::kMix) {
    try {
      run_mix(kernel_name(name), blocks, run, params);
    } catch (const deepgemm_ascend::core::Error& e) {
      return report(err, len, e.what(), kError);
    } catch (const std::exception& e) {
      return report(err, len, e.what(), kError);
    }
    return 0;
  }
  // An AIV-only kernel's cores are vector cores (GetBlockIdx counts them: one per block), each with the
  // UB aligned like the mix kernels' (a fresh TPipe per core).
  const bool vector = found->cores == Cores::kVector;
  auto& cd = AscendC::ConstDefiner::Instance();
  UbBuffer ub(cd.bufferInitLen.at(AscendC::Hardware::UB));
  struct Restore {
    uint8_t* ub;
    ~Restore() {
      auto& c = AscendC::ConstDefiner::Instance();
      c.cpuUB = ub, c.hardwareCpuBufferMap[AscendC::Hardware::UB] = ub;
      g_coreType = AscendC::AIC;
    }
  } restore{cd.cpuUB};
  if (vector) cd.cpuUB = ub.p, cd.hardwareCpuBufferMap[AscendC::Hardware::UB] = ub.p;
  g_coreType = vector ? AscendC::AIV : AscendC::AIC;
  g_taskRation = 1, sub_block_idx = 0;
  block_num = int64_t(blocks);
  for (unsigned core = 0; core < blocks; ++core) {
    block_idx = int64_t(core);
    try {
      dga_model::begin_core(kernel_name(name), int(core), vector);
      run(params);
      dga_model::end_core();
    } catch (const deepgemm_ascend::core::Error& e) {
      return report(err, len, e.what(), kError);
    } catch (const std::exception& e) {
      return report(err, len, std::string("core ") + std::to_string(core) + ": " + e.what(), kError);
    }
  }
  return 0;
}
