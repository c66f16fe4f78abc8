// The NPU launchers (dga_npu_launch_gemm_<family>[_<kind>] of cpp/kernels/ascend/*.asc) on the instruction
// model: the same run_* templates the .asc kernels call (entries_<family>.cpp), compiled with the host
// compiler against the devkit headers in CPU-debug mode (mix mode: the core type is chosen at run time), run
// with the model's checks: a cube-only kernel's cores one after the other, a mix kernel's groups (the cube
// core and its two vector cores, which exchange cross-core flags) one after the other, each as threads that
// take turns. Our reading of the documentation, not the 950.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernel_operator.h"

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "model_entries.hpp"
#include "model_runner.hpp"
#include "npu_model_launch.h"

namespace {

using dga_model::Cores;
using dga_model::Entry;
using dga_model::Run;

const Entry* find_entry(const std::string& name) {
  for (const dga_model::Entries& family : {dga_model::gemm_entries(), dga_model::mqa_entries(),
                                           dga_model::mega_moe_entries(), dga_model::vector_entries(),
                                           dga_model::probe_entries()})
    for (size_t i = 0; i < family.size; ++i)
      if (name == family.data[i].name) return &family.data[i];
  return nullptr;
}

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
void run_mix(const std::string& kernel, unsigned groups, const std::function<void(int)>& body) {
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
    dga_model::run_group(kernel, int(g), bases, switch_core, body);
  }
}

// The launch's GM regions for every core's checker, cleared when the launch ends.
struct GmScope {
  GmScope(const DgaGmRegion* gm, size_t n) {
    std::vector<deepgemm_ascend::npu_model::BufferPos> regions;
    for (size_t i = 0; i < n; ++i)
      regions.push_back({gm[i].name ? gm[i].name : "?", static_cast<const uint8_t*>(gm[i].base), gm[i].bytes});
    deepgemm_ascend::npu_model::set_gm_regions(std::move(regions));
  }
  ~GmScope() { deepgemm_ascend::npu_model::set_gm_regions({}); }
  GmScope(const GmScope&) = delete;
  GmScope& operator=(const GmScope&) = delete;
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

// Every core of a cube-only or vector-only kernel one after the other, each with a fresh TPipe and (vector)
// the UB aligned like the mix kernels'; a mix kernel's groups with run_mix.
void dga_model::run_cores(const std::string& kernel, unsigned blocks, Cores cores,
                          const std::function<void(int)>& body) {
  if (cores == Cores::kMix) return run_mix(kernel, blocks, body);
  // An AIV-only kernel's cores are vector cores (GetBlockIdx counts them: one per block).
  const bool vector = cores == Cores::kVector;
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
    dga_model::begin_core(kernel, int(core), vector);
    try {
      body(vector ? 1 : 0);
    } catch (const deepgemm_ascend::core::Error&) {
      dga_model::abandon_core();
      throw;
    } catch (const std::exception& e) {
      dga_model::abandon_core();
      deepgemm_ascend::core::fail(deepgemm_ascend::core::ErrorKind::kRuntime, "npu_model", "core ", core, ": ",
                                  e.what());
    }
    dga_model::end_core();
  }
}

// An error inside a run (an instruction the model does not implement included) is a model error: the
// kernels must run on the model, so it is reported as such (RuntimeError), never as a missing kernel.
extern "C" __attribute__((visibility("default"))) int dga_npu_model_launch(const char* entry, unsigned blocks,
                                                                           const void* params, const DgaGmRegion* gm,
                                                                           size_t gm_count, char* err, size_t len) {
  constexpr int kError = -1, kRefused = -2;
  const std::string name = entry;
  const Entry* found = find_entry(name);
  if (found == nullptr) return report(err, len, "no such NPU launcher on the instruction model", kRefused);
  const GmScope gm_scope(gm, gm_count);
  const Run run = found->run;
  try {
    dga_model::run_cores(kernel_name(name), blocks, found->cores, [&](int) { run(params); });
  } catch (const deepgemm_ascend::core::Error& e) {
    return report(err, len, e.what(), kError);
  } catch (const std::exception& e) {
    return report(err, len, e.what(), kError);
  }
  return 0;
}
