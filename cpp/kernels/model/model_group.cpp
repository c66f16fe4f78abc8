// The cores of a mix kernel's group on the model: the AIC and its two AIVs run as threads one at a time
// (npu_model/group.hpp), the cross-core flags of mode 2 (ffts_cross_core_sync / wait_flag_dev as the
// devkit's CPU-debug headers issue CrossCoreSetFlag / CrossCoreWaitFlag, impl/basic_api/dav_3510/
// kernel_operator_sync_impl.h), and the Fixpipe from the AIC's L0C into its AIVs' UBs. A cross-core flag
// also orders the two cores' accesses for the access checker. Plain C++ (no devkit headers).
#include <array>
#include <deque>
#include <memory>
#include <string>

#include "deepgemm_ascend/npu_model/fixpipe.hpp"
#include "deepgemm_ascend/npu_model/group.hpp"
#include "model_core.hpp"
#include "model_runner.hpp"

namespace dga_model {

namespace {

constexpr int kSlots = 3;  // AIC, AIV0, AIV1
constexpr int kModeShift = 4, kModeMask = 0x3, kIdShift = 8, kIdMask = 0xF;  // the ffts message (GetffstMsg)
constexpr int kModeAicAiv = 2;

Core* g_current = nullptr;

struct Group {
  std::array<std::unique_ptr<Core>, kSlots> cores;
  nm::CrossCoreFlags flags;
  // The setter's access clock of every count still set, per vector core and id (for the access checker).
  std::array<std::array<std::deque<nm::Hazards::Clock>, nm::CrossCoreFlags::kIds>, 2> to_aiv, from_aiv;
  std::array<const uint8_t*, kSlots> ub{};
  nm::GroupScheduler* scheduler = nullptr;
  int slot = 0;
};
Group* g_group = nullptr;

Group& group(const char* instr) {
  DGA_REQUIRE(g_group != nullptr, kRuntime, "cross-core", instr, " in a cube-only run (kernel ", current().kernel, ")");
  return *g_group;
}

Core& aiv(Group& g, int v) { return *g.cores[size_t(1 + v)]; }

}  // namespace

Core& current() {
  DGA_REQUIRE(g_current != nullptr, kRuntime, "npu_model", "an instruction outside a core run");
  return *g_current;
}
void select(Core* core) { g_current = core; }

void run_group(const std::string& kernel, int index, const uint8_t* const ub[3],
               const std::function<void(int)>& switch_core, const std::function<void(int)>& body) {
  Group g;
  const std::string prefix = "group " + std::to_string(index) + " ";
  const char* names[kSlots] = {"AIC", "AIV0", "AIV1"};
  for (int s = 0; s < kSlots; ++s) g.ub[size_t(s)] = ub[s];
  for (int s = 0; s < kSlots; ++s) {  // each core's checkers see its own buffers
    switch_core(s);
    g.cores[size_t(s)] = std::make_unique<Core>(kernel, prefix + names[s], s - 1);
  }
  nm::GroupScheduler scheduler(kSlots, [&](int s) {
    switch_core(s);
    g.slot = s;
    select(g.cores[size_t(s)].get());
  });
  g.scheduler = &scheduler;
  g_group = &g;
  std::string error;
  auto kind = deepgemm_ascend::core::ErrorKind::kRuntime;
  try {
    // The vector cores start: the devkit's CPU-debug TPipe fills every buffer of its core with random
    // values when it is built (kernel_tpipe_impl_c310.h, SetBufferCtx), so the AIVs' TPipes must exist
    // before the AIC writes into their UBs. On the 950 building a TPipe does not touch buffer contents.
    constexpr int kFirstVectorCore = 1;
    scheduler.run(body, kFirstVectorCore);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // A deadlock first: the cores ran on past their waits, so what they did after it is its consequence.
  if (error.empty() && !scheduler.deadlock().empty())
    error = "kernel " + kernel + ": a cross-core wait that can never be satisfied: " + scheduler.deadlock();
  for (auto& c : g.cores) {
    if (!c) continue;
    select(c.get());
    guard("end of kernel", [&] { c->events.finish(); });
    if (error.empty() && !c->error.empty()) error = c->error, kind = c->error_kind;
  }
  if (error.empty())
    for (const std::string& f : g.flags.left_set()) {
      error = "kernel " + kernel + ", " + prefix + ": cross-core flag still set when the kernel returns: " + f;
      break;
    }
  select(nullptr);
  g_group = nullptr;
  if (!error.empty()) deepgemm_ascend::core::fail(kind, "npu_model", error);
}

void cross_set(int pipe, uint64_t msg) {
  guard("ffts_cross_core_sync", [&] {
    Group& g = group("CrossCoreSetFlag");
    Core& c = current();
    const int mode = int(msg >> kModeShift) & kModeMask, id = int(msg >> kIdShift) & kIdMask;
    DGA_REQUIRE(mode == kModeAicAiv, kNotImplemented, "modeId", "cross-core mode ", mode,
                " is not modelled (mode 2: AIC <-> both AIVs)");
    const std::string err = g.flags.set(c.sub, id);
    DGA_REQUIRE(err.empty(), kRuntime, "cross-core", "CrossCoreSetFlag on pipe ", nm::pipe_name(pipe), ": ", err);
    if (c.sub >= 0) {
      g.from_aiv[size_t(c.sub)][size_t(id)].push_back(c.hazards.clock_of(pipe));
      return;
    }
    for (int v = 0; v < 2; ++v) {  // a set on FIX follows the Fixpipes into the AIVs' UBs
      nm::Hazards::Clock k{};
      if (pipe == kPipeFix) k[nm::kPipeAicFix] = aiv(g, v).hazards.clock_of(nm::kPipeAicFix)[nm::kPipeAicFix];
      g.to_aiv[size_t(v)][size_t(id)].push_back(k);
    }
  });
}

void cross_wait(int pipe, int id) {
  guard("wait_flag_dev", [&] {
    Group& g = group("CrossCoreWaitFlag");
    Core& c = current();
    const int slot = g.slot;
    const std::string what = c.name + " waits for cross-core flag " + std::to_string(id) + " on pipe " + nm::pipe_name(pipe);
    if (!g.scheduler->wait_until(slot, [&g, &c, id] { return g.flags.can_wait(c.sub, id); }, what)) return;
    g.flags.take(c.sub, id);
    // On the 950 the wait blocks the later instructions of its own pipe only (CrossCoreWaitFlag: "阻塞指定流水
    // 的后续指令"); other pipes are ordered after it by the core's own flags.
    if (c.sub >= 0) {
      auto& q = g.to_aiv[size_t(c.sub)][size_t(id)];
      c.hazards.order_after(pipe, q.front());
      q.pop_front();
      return;
    }
    for (int v = 0; v < 2; ++v) {  // a wait on FIX: the AIC's next Fixpipes into AIV v's UB come after its set
      auto& q = g.from_aiv[size_t(v)][size_t(id)];
      if (pipe == kPipeFix) aiv(g, v).hazards.order_after(nm::kPipeAicFix, q.front());
      q.pop_front();
    }
  });
}

void fixpipe_ub(void* dst, const float* src, uint64_t n, uint64_t m, uint64_t ds, uint64_t ss, int dual, int sub,
                int quant, bool nz2nd, int unit_flag) {
  constexpr int kDualSplitM = 1;
  run("copy_matrix_cc_to_ub", kPipeFix, [&](nm::Accesses* acc) {
    Group& g = group("Fixpipe to UB");
    DGA_REQUIRE(quant == 0, kNotImplemented, "quantPre", "the Fixpipe to UB is modelled without conversion");
    DGA_REQUIRE(dual == 0 || dual == kDualSplitM, kNotImplemented, "dualDstCtl", "only the split by rows is modelled");
    const size_t off = size_t(static_cast<const uint8_t*>(dst) - g.ub[0]);
    uint8_t* to[2] = {const_cast<uint8_t*>(g.ub[size_t(1 + (dual ? 0 : sub))]) + off,
                      const_cast<uint8_t*>(g.ub[2]) + off};
    nm::Fixpipe op;
    op.n = uint16_t(n), op.m = uint16_t(m), op.src_stride = uint16_t(ss), op.dst_stride = uint32_t(ds), op.nz2nd = nz2nd;
    op.dual_split_m = dual == kDualSplitM;
    op.to_ub = true;
    require_one_nd(current().loop3);
    nm::fixpipe(to, src, op, acc);
    for (int v = 0; v < 2; ++v) aiv(g, v).hazards.instruction(nm::kPipeAicFix, "copy_matrix_cc_to_ub", *acc);
  }, unit_flag);
}

}  // namespace dga_model
