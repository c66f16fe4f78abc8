// The NPU launchers (dga_npu_launch_gemm_<family>[_<kind>] of cpp/npu/*.asc) on the instruction
// model: the same run_* templates the .asc kernels call (entries_<family>.cpp), compiled with the host
// compiler against the devkit headers in CPU-debug mode (mix mode: the core type is chosen at run time), run
// with the model's checks: a cube-only kernel's cores one after the other, a mix kernel's groups (the cube
// core and its two vector cores, which exchange cross-core flags) all together, every core a thread, the
// threads taking turns. In the timing mode every launch's cores run together, in epochs of simulated time. Our reading of the documentation, not the 950.
#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernel_operator.h"

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "model_entries.hpp"
#include "model_runner.hpp"
#include "model_timing.hpp"
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

// A core's buffer on the model (the devkit keeps one of each per process), aligned like the devkit's.
struct CpuBuffer {
  static constexpr size_t kAlign = 4096;
  explicit CpuBuffer(size_t bytes)
      : p(static_cast<uint8_t*>(std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign))) {}
  ~CpuBuffer() { std::free(p); }
  CpuBuffer(const CpuBuffer&) = delete;
  CpuBuffer& operator=(const CpuBuffer&) = delete;
  uint8_t* p;
};

// One group's buffers (the devkit's CPU buffers of each core: the AIC's L1, L0A, L0B, L0C, bias table,
// fixpipe buffer and MX scale buffers, each core's UB), so that the groups of a launch can run together.
struct GroupBuffers {
  static constexpr int kSlots = 3;
  static constexpr size_t kMxBytes = 4 * 1024;  // cpuL0AMx / cpuL0BMx (the devkit's ConstDefiner)
  using Hw = AscendC::Hardware;
  explicit GroupBuffers(const AscendC::ConstDefiner& cd)
      : ub{CpuBuffer(cd.bufferInitLen.at(Hw::UB)), CpuBuffer(cd.bufferInitLen.at(Hw::UB)),
           CpuBuffer(cd.bufferInitLen.at(Hw::UB))},
        l1(cd.bufferInitLen.at(Hw::L1)), l0a(cd.bufferInitLen.at(Hw::L0A)), l0b(cd.bufferInitLen.at(Hw::L0B)),
        l0c(cd.bufferInitLen.at(Hw::L0C)), bias(cd.bufferInitLen.at(Hw::BIAS)), fixbuf(cd.bufferInitLen.at(Hw::FIXBUF)),
        l0a_mx(kMxBytes), l0b_mx(kMxBytes) {}
  CpuBuffer ub[kSlots];
  CpuBuffer l1, l0a, l0b, l0c, bias, fixbuf, l0a_mx, l0b_mx;
};

// The devkit's buffer pointers of the process, put back when the launch ends.
struct CpuBuffers {
  uint8_t *ub, *l1, *l0a, *l0b, *l0c, *bias, *fixbuf, *l0a_mx, *l0b_mx;
};
CpuBuffers cpu_buffers(const AscendC::ConstDefiner& cd) {
  return {cd.cpuUB, cd.cpuL1, cd.cpuL0A, cd.cpuL0B, cd.cpuL0C, cd.cpuBIAS, cd.cpuFIXBUF, cd.cpuL0AMx, cd.cpuL0BMx};
}
void use_buffers(AscendC::ConstDefiner& cd, const CpuBuffers& b) {
  using Hw = AscendC::Hardware;
  cd.cpuUB = b.ub, cd.cpuL1 = b.l1, cd.cpuL0A = b.l0a, cd.cpuL0B = b.l0b, cd.cpuL0C = b.l0c;
  cd.cpuBIAS = b.bias, cd.cpuFIXBUF = b.fixbuf, cd.cpuL0AMx = b.l0a_mx, cd.cpuL0BMx = b.l0b_mx;
  for (auto [hw, p] : {std::pair{Hw::UB, b.ub}, {Hw::L1, b.l1}, {Hw::L0A, b.l0a}, {Hw::L0B, b.l0b}, {Hw::L0C, b.l0c},
                       {Hw::BIAS, b.bias}, {Hw::FIXBUF, b.fixbuf}})
    cd.hardwareCpuBufferMap[hw] = p;
}

// The devkit's block-local state that a core's code may leave between two of its instructions (its TPipe,
// the simulated CMPMASK, the mask count, the dequantisation scales, the repeat config), kept per core while
// the cores of a launch take turns.
struct BlockLocals {
  AscendC::TPipe* pipe = nullptr;
  uint64_t mask_count = 0, cmp_low = 0, cmp_high = 0, deq_scale = 0, rpt = 0;
  half deq_value{};
  static BlockLocals save() {
    namespace in = AscendC::Internal;
    return {g_tPipePtr, g_maskCount, in::g_cmpMaskLow, in::g_cmpMaskHigh, in::g_deqScale, in::g_rptConfig,
            in::g_deqValue};
  }
  void restore() const {
    namespace in = AscendC::Internal;
    g_tPipePtr = pipe, g_maskCount = mask_count, in::g_cmpMaskLow = cmp_low, in::g_cmpMaskHigh = cmp_high;
    in::g_deqScale = deq_scale, in::g_rptConfig = rpt, in::g_deqValue = deq_value;
  }
};

// The devkit's per-core globals, swapped when the model switches between the cores of the launch: the
// core type and indices (GetBlockIdx on an AIV is block_idx * g_taskRation + sub_block_idx), the core's
// block-local state, and its group's buffers.
void run_mix(const std::string& kernel, unsigned groups, const std::function<void(int)>& body) {
  constexpr int kSlots = GroupBuffers::kSlots, kSubBlocks = 2;
  auto& cd = AscendC::ConstDefiner::Instance();
  std::vector<std::unique_ptr<GroupBuffers>> buffers;
  std::vector<std::array<const uint8_t*, kSlots>> bases;
  for (unsigned g = 0; g < groups; ++g) {
    buffers.push_back(std::make_unique<GroupBuffers>(cd));
    const GroupBuffers& b = *buffers.back();
    bases.push_back({b.ub[0].p, b.ub[1].p, b.ub[2].p});
  }
  block_num = int64_t(groups);
  g_taskRation = kSubBlocks;
  struct Restore {
    CpuBuffers process;
    ~Restore() {
      use_buffers(AscendC::ConstDefiner::Instance(), process);
      g_coreType = AscendC::AIC, g_taskRation = 1, sub_block_idx = 0, g_tPipePtr = nullptr;
    }
  } restore{cpu_buffers(cd)};
  std::vector<std::array<BlockLocals, kSlots>> locals(groups);
  std::pair<int, int> last{-1, -1};
  const auto switch_core = [&](int g, int s) {
    if (last.first >= 0) locals[size_t(last.first)][size_t(last.second)] = BlockLocals::save();
    locals[size_t(g)][size_t(s)].restore();
    block_idx = int64_t(g), sub_block_idx = s == 0 ? 0 : s - 1;
    g_coreType = s == 0 ? AscendC::AIC : AscendC::AIV;
    GroupBuffers& b = *buffers[size_t(g)];
    use_buffers(cd, {b.ub[s].p, b.l1.p, b.l0a.p, b.l0b.p, b.l0c.p, b.bias.p, b.fixbuf.p, b.l0a_mx.p, b.l0b_mx.p});
    last = {g, s};
  };
  dga_model::run_groups(kernel, int(groups), bases, switch_core, body);
}

// The timing mode's cube-only (vector: vector-only) launch: its cores take turns (run_lockstep), so each
// has its own buffers and block-local state, swapped in like run_mix's.
void run_interleaved(const std::string& kernel, unsigned blocks, bool vector, const std::function<void(int)>& body) {
  auto& cd = AscendC::ConstDefiner::Instance();
  std::vector<std::unique_ptr<GroupBuffers>> buffers;
  for (unsigned k = 0; k < blocks; ++k) buffers.push_back(std::make_unique<GroupBuffers>(cd));
  struct Restore {
    CpuBuffers process;
    ~Restore() {
      use_buffers(AscendC::ConstDefiner::Instance(), process);
      g_coreType = AscendC::AIC, g_tPipePtr = nullptr;
    }
  } restore{cpu_buffers(cd)};
  g_coreType = vector ? AscendC::AIV : AscendC::AIC;
  g_taskRation = 1, sub_block_idx = 0;
  block_num = int64_t(blocks);
  std::vector<BlockLocals> locals(blocks);
  int last = -1;
  const auto switch_core = [&](int k) {
    if (last >= 0) locals[size_t(last)] = BlockLocals::save();
    locals[size_t(k)].restore();
    block_idx = int64_t(k);
    GroupBuffers& b = *buffers[size_t(k)];
    use_buffers(cd, {b.ub[vector ? 1 : 0].p, b.l1.p, b.l0a.p, b.l0b.p, b.l0c.p, b.bias.p, b.fixbuf.p, b.l0a_mx.p,
                     b.l0b_mx.p});
    last = k;
  };
  dga_model::run_lockstep(kernel, int(blocks), vector, switch_core, body);
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
// the UB aligned like the mix kernels' (in the timing mode together, run_interleaved); a mix kernel's groups
// with run_mix.
void dga_model::run_cores(const std::string& kernel, unsigned blocks, Cores cores,
                          const std::function<void(int)>& body) {
  const dga_model::TimingScope timing(kernel, blocks);
  if (cores == Cores::kMix) return run_mix(kernel, blocks, body);
  // An AIV-only kernel's cores are vector cores (GetBlockIdx counts them: one per block).
  const bool vector = cores == Cores::kVector;
  if (dga_model::timing_on()) return run_interleaved(kernel, blocks, vector, body);
  auto& cd = AscendC::ConstDefiner::Instance();
  CpuBuffer ub(cd.bufferInitLen.at(AscendC::Hardware::UB));
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
