// The cores of a mix kernel's group on the model: the AIC and its two AIVs run as threads one at a time
// (npu_model/group.hpp), the cross-core flags of mode 2 (ffts_cross_core_sync / wait_flag_dev as the
// devkit's CPU-debug headers issue CrossCoreSetFlag / CrossCoreWaitFlag, impl/basic_api/dav_3510/
// kernel_operator_sync_impl.h) and of mode 4 (set_intra_block / wait_intra_block), and the Fixpipe from the
// AIC's L0C into its AIVs' UBs. A cross-core flag also orders the two cores' accesses for the access checker.
// Plain C++ (no devkit headers).
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
constexpr int kPipeS = 0;

Core* g_current = nullptr;

// The setter's access clock of every count still set (for the access checker), per vector core and id: to_aiv
// for sets by the AIC, from_aiv for sets by the AIV (mode 4: the AIC's id - 16 v).
struct FlagClocks {
  std::array<std::array<std::deque<nm::Hazards::Clock>, 16>, 2> to_aiv, from_aiv;
};

struct Group {
  std::array<std::unique_ptr<Core>, kSlots> cores;
  nm::CrossCoreFlags flags;       // mode 2
  nm::IntraBlockFlags intra;      // mode 4
  FlagClocks ffts_clocks, intra_clocks;
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

// What a set by the AIC on `pipe` orders for AIV v: a set on FIX follows the Fixpipes into the AIV's UB.
nm::Hazards::Clock aic_set_clock(Group& g, int pipe, int v) {
  nm::Hazards::Clock k{};
  if (pipe == kPipeFix) k[nm::kPipeAicFix] = aiv(g, v).hazards.clock_of(nm::kPipeAicFix)[nm::kPipeAicFix];
  return k;
}

// On the 950 a wait blocks the later instructions of its own pipe only (CrossCoreWaitFlag: "阻塞指定流水的
// 后续指令"); other pipes are ordered after it by the core's own flags. A wait on PIPE_S (mode 4) blocks the
// scalar unit, which issues every later instruction: every pipe comes after it ("阻塞本核后续指令的下发").
void aiv_wait_order(Core& c, int pipe, const nm::Hazards::Clock& k) {
  c.hazards.order_after(pipe == kPipeS ? -1 : pipe, k);
}
// A wait by the AIC that blocks FIX: its next Fixpipes into AIV v's UB come after AIV v's set.
void aic_wait_order(Group& g, int pipe, int v, const nm::Hazards::Clock& k) {
  if (pipe == kPipeFix || pipe == kPipeS) aiv(g, v).hazards.order_after(nm::kPipeAicFix, k);
}

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
  if (error.empty())
    for (const std::string& f : g.intra.left_set()) {
      error = "kernel " + kernel + ", " + prefix + ": mode-4 cross-core flag still set when the kernel returns: " + f;
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
      g.ffts_clocks.from_aiv[size_t(c.sub)][size_t(id)].push_back(c.hazards.clock_of(pipe));
      return;
    }
    for (int v = 0; v < 2; ++v) g.ffts_clocks.to_aiv[size_t(v)][size_t(id)].push_back(aic_set_clock(g, pipe, v));
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
    if (c.sub >= 0) {
      auto& q = g.ffts_clocks.to_aiv[size_t(c.sub)][size_t(id)];
      aiv_wait_order(c, pipe, q.front());
      q.pop_front();
      return;
    }
    for (int v = 0; v < 2; ++v) {
      auto& q = g.ffts_clocks.from_aiv[size_t(v)][size_t(id)];
      aic_wait_order(g, pipe, v, q.front());
      q.pop_front();
    }
  });
}

void intra_set(int pipe, int id) {
  guard("set_intra_block", [&] {
    Group& g = group("CrossCoreSetFlag (mode 4)");
    Core& c = current();
    DGA_REQUIRE(pipe != nm::kPipeAll, kRuntime, "pipe", "CrossCoreSetFlag with mode 4 on PIPE_ALL (not allowed)");
    const std::string err = g.intra.set(c.sub, id);
    DGA_REQUIRE(err.empty(), kRuntime, "cross-core", "CrossCoreSetFlag (mode 4) on pipe ", nm::pipe_name(pipe), ": ",
                err);
    const nm::IntraBlockFlags::Target t = nm::IntraBlockFlags::target(c.sub, id);
    if (c.sub >= 0)
      g.intra_clocks.from_aiv[size_t(c.sub)][size_t(id)].push_back(c.hazards.clock_of(pipe));
    else
      g.intra_clocks.to_aiv[size_t(t.sub)][size_t(t.id)].push_back(aic_set_clock(g, pipe, t.sub));
  });
}

void intra_wait(int pipe, int id) {
  guard("wait_intra_block", [&] {
    Group& g = group("CrossCoreWaitFlag (mode 4)");
    Core& c = current();
    DGA_REQUIRE(pipe != nm::kPipeAll, kRuntime, "pipe", "CrossCoreWaitFlag with mode 4 on PIPE_ALL (not allowed)");
    const std::string err = nm::IntraBlockFlags::check_id(c.sub, id);
    DGA_REQUIRE(err.empty(), kRuntime, "cross-core", "CrossCoreWaitFlag (mode 4): ", err);
    const std::string what =
        c.name + " waits for mode-4 cross-core flag " + std::to_string(id) + " on pipe " + nm::pipe_name(pipe);
    if (!g.scheduler->wait_until(g.slot, [&g, &c, id] { return g.intra.can_wait(c.sub, id); }, what)) return;
    g.intra.take(c.sub, id);
    if (c.sub >= 0) {
      auto& q = g.intra_clocks.to_aiv[size_t(c.sub)][size_t(id)];
      aiv_wait_order(c, pipe, q.front());
      q.pop_front();
      return;
    }
    const int v = id / nm::IntraBlockFlags::kAivIds;  // the AIV whose sets count for this id
    auto& q = g.intra_clocks.from_aiv[size_t(v)][size_t(id % nm::IntraBlockFlags::kAivIds)];
    aic_wait_order(g, pipe, v, q.front());
    q.pop_front();
  });
}

void fixpipe_ub(void* dst, const float* src, uint64_t n, uint64_t m, uint64_t ds, uint64_t ss, int dual, int sub,
                int quant, bool nz2nd, int unit_flag, bool src_s32) {
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
    op.src_s32 = src_s32;
    require_one_nd(current().loop3);
    nm::fixpipe(to, src, op, acc);
    for (int v = 0; v < 2; ++v) aiv(g, v).hazards.instruction(nm::kPipeAicFix, "copy_matrix_cc_to_ub", *acc);
  }, unit_flag);
}

}  // namespace dga_model
