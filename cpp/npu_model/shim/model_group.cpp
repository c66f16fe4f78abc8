// The cores of a mix kernel's launch on the model: every group's AIC and two AIVs run as threads one at a
// time (npu_model/group.hpp), all groups of the launch together, so that a core may wait for cores of other
// groups; in the timing mode a core also hands over at each epoch of simulated time. The cross-core flags of modes 0, 1 and 2 (ffts_cross_core_sync / wait_flag_dev as the devkit's
// CPU-debug headers issue CrossCoreSetFlag / CrossCoreWaitFlag, impl/basic_api/dav_3510/
// kernel_operator_sync_impl.h) and of mode 4 (set_intra_block / wait_intra_block), and the Fixpipe from the
// AIC's L0C into its AIVs' UBs. A cross-core flag also orders the cores' accesses for the access checker.
// Plain C++ (no devkit headers).
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "deepgemm_ascend/npu_model/fixpipe.hpp"
#include "deepgemm_ascend/npu_model/group.hpp"
#include "model_core.hpp"
#include "model_runner.hpp"

namespace dga_model {

namespace {

constexpr int kSlots = 3;  // AIC, AIV0, AIV1
constexpr int kModeShift = 4, kModeMask = 0x3, kIdShift = 8, kIdMask = 0xF;  // the ffts message (GetffstMsg)
constexpr int kModeAll = 0, kModeAivs = 1, kModeAicAiv = 2;

Core* g_current = nullptr;

// The setter's access clock of every count still set (for the access checker), per vector core and id: to_aiv
// for sets by the AIC, from_aiv for sets by the AIV (mode 4: the AIC's id - 16 v).
struct FlagClocks {
  std::array<std::array<std::deque<nm::Hazards::Clock>, 16>, 2> to_aiv, from_aiv;
  // The timing mode's: the cycle of each such set.
  std::array<std::array<std::deque<double>, 16>, 2> to_aiv_at, from_aiv_at;
};

// The timing mode's cycle of a cross-core set by core c on `pipe` (0 with the timing mode off).
double set_cycle(const Core& c, int pipe) { return c.timing != nullptr ? c.timing->set_time(pipe) : 0.0; }
// A cross-core wait on `pipe` of core c lets its later instructions start at cycle t at the earliest.
void wait_cycle(Core& c, int pipe, double t) {
  if (c.timing != nullptr) c.timing->wait_until(pipe == kPipeS ? -1 : pipe, t);
}

// The timing mode's mode-0 / mode-1 rounds per flag id: the latest arrival of the round under way and each
// completed round's cycle (its last arrival), which every participant's wait takes in order.
struct RoundTimes {
  std::array<double, 16> arriving{};
  std::array<std::vector<double>, 16> done;
  std::map<std::pair<int, int>, size_t> taken;  // (participant, id) -> rounds waited
};

struct Group {
  int index = 0;
  std::array<std::unique_ptr<Core>, kSlots> cores;
  nm::CrossCoreFlags flags;                  // mode 2
  nm::BarrierFlags aivs{nm::CrossCoreFlags::kVectorCores};  // mode 1
  nm::IntraBlockFlags intra;                 // mode 4
  FlagClocks ffts_clocks, intra_clocks;
  // The setter's own access clock at its last mode-0 / mode-1 set, per slot and id: its wait orders the
  // core's later instructions after it (the other cores' accesses are to GM, which is not checked for order).
  std::array<std::array<nm::Hazards::Clock, nm::BarrierFlags::kIds>, kSlots> barrier_clocks{};
  RoundTimes aiv_rounds;  // mode 1
  std::array<const uint8_t*, kSlots> ub{};
  int slot = 0;
};

// The launch: its groups, the scheduler that runs all their cores, and the mode-0 flags (every AIV of the
// launch, every AIC). Scheduler slots: the AIVs first (group g's AIV v is 2 g + v), then the AICs (2 G + g).
struct Launch {
  int group_count = 0;
  std::vector<std::unique_ptr<Group>> groups;
  nm::GroupScheduler* scheduler = nullptr;
  std::unique_ptr<nm::BarrierFlags> all_aiv, all_aic;  // mode 0
  RoundTimes all_aiv_rounds, all_aic_rounds;
};
Launch* g_launch = nullptr;
Group* g_group = nullptr;  // the group of the core that runs now

int scheduler_slot(const Group& g, int slot) {
  const int n = g_launch->group_count;
  return slot == 0 ? 2 * n + g.index : 2 * g.index + slot - 1;
}

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

namespace {
// The group's model errors after the run: its cores' first error, then a flag left set.
std::string group_error(Group& g, const std::string& kernel, deepgemm_ascend::core::ErrorKind& kind) {
  std::string error;
  for (auto& c : g.cores) {
    select(c.get());
    guard("end of kernel", [&] { c->events.finish(); });
    if (error.empty() && !c->error.empty()) error = c->error, kind = c->error_kind;
  }
  if (!error.empty()) return error;
  const std::string where = "kernel " + kernel + ", group " + std::to_string(g.index) + ": ";
  for (const std::string& f : g.flags.left_set()) return where + "cross-core flag still set when the kernel returns: " + f;
  for (const std::string& f : g.aivs.left_set([](int v) { return "AIV" + std::to_string(v); }))
    return where + "mode-1 cross-core flag still set when the kernel returns: " + f;
  for (const std::string& f : g.intra.left_set())
    return where + "mode-4 cross-core flag still set when the kernel returns: " + f;
  return {};
}

std::string launch_error(Launch& l, const std::string& kernel) {
  const auto left = [&](const nm::BarrierFlags& f, bool aiv) {
    return f.left_set([aiv](int c) {
      return aiv ? "group " + std::to_string(c / 2) + " AIV" + std::to_string(c % 2) : "group " + std::to_string(c) + " AIC";
    });
  };
  for (const auto& [f, aiv] : {std::pair{l.all_aiv.get(), true}, {l.all_aic.get(), false}})
    for (const std::string& s : left(*f, aiv))
      return "kernel " + kernel + ": mode-0 cross-core flag still set when the kernel returns: " + s;
  return {};
}
}  // namespace

void run_groups(const std::string& kernel, int groups, const std::vector<std::array<const uint8_t*, 3>>& ub,
                const std::function<void(int, int)>& switch_core, const std::function<void(int)>& body) {
  Launch l;
  l.group_count = groups;
  l.all_aiv = std::make_unique<nm::BarrierFlags>(2 * groups);
  l.all_aic = std::make_unique<nm::BarrierFlags>(groups);
  const char* names[kSlots] = {"AIC", "AIV0", "AIV1"};
  std::vector<std::pair<int, int>> at(size_t(3 * groups));  // scheduler slot -> (group, slot)
  g_launch = &l;
  for (int i = 0; i < groups; ++i) {
    auto g = std::make_unique<Group>();
    g->index = i;
    for (int s = 0; s < kSlots; ++s) g->ub[size_t(s)] = ub[size_t(i)][size_t(s)];
    for (int s = 0; s < kSlots; ++s) {  // each core's checkers see its own buffers
      switch_core(i, s);
      g->cores[size_t(s)] = std::make_unique<Core>(kernel, "group " + std::to_string(i) + " " + names[s], s - 1);
      at[size_t(scheduler_slot(*g, s))] = {i, s};
    }
    l.groups.push_back(std::move(g));
  }
  nm::GroupScheduler scheduler(3 * groups, [&](int k) {
    const auto [i, s] = at[size_t(k)];
    switch_core(i, s);
    g_group = l.groups[size_t(i)].get();
    g_group->slot = s;
    select(g_group->cores[size_t(s)].get());
  });
  l.scheduler = &scheduler;
  if (timing_on()) {  // the cores advance through simulated time together (model_timing.hpp)
    scheduler.use_epochs(kEpochCycles);
    for (auto& g : l.groups)
      for (int s = 0; s < kSlots; ++s) {
        Core& c = *g->cores[size_t(s)];
        c.scheduler = &scheduler, c.slot = scheduler_slot(*g, s);
      }
  }
  std::string error;
  auto kind = deepgemm_ascend::core::ErrorKind::kRuntime;
  try {
    // The vector cores start (scheduler slot 0: group 0's AIV0), the AICs come after every AIV's first
    // wait: the devkit's CPU-debug TPipe fills every buffer of its core with random values when it is
    // built (kernel_tpipe_impl_c310.h, SetBufferCtx), so the AIVs' TPipes must exist before an AIC writes
    // into their UBs. On the 950 building a TPipe does not touch buffer contents.
    scheduler.run([&](int k) { body(at[size_t(k)].second); }, 0);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // A deadlock first: the cores ran on past their waits, so what they did after it is its consequence.
  if (error.empty() && !scheduler.deadlock().empty())
    error = "kernel " + kernel + ": a cross-core wait that can never be satisfied: " + scheduler.deadlock();
  for (auto& g : l.groups) {
    auto k = kind;
    const std::string e = group_error(*g, kernel, k);
    if (error.empty() && !e.empty()) error = e, kind = k;
  }
  if (error.empty()) error = launch_error(l, kernel);
  select(nullptr);
  g_group = nullptr;
  g_launch = nullptr;
  if (!error.empty()) deepgemm_ascend::core::fail(kind, "npu_model", error);
}

namespace {
// The mode-0 / mode-1 flags a core of group g takes part in, and its index among their participants.
struct Barrier {
  nm::BarrierFlags* flags;
  int core;
  RoundTimes* rounds;
};
Barrier all_cores(Group& g, const Core& c) {
  return c.sub < 0 ? Barrier{g_launch->all_aic.get(), g.index, &g_launch->all_aic_rounds}
                   : Barrier{g_launch->all_aiv.get(), 2 * g.index + c.sub, &g_launch->all_aiv_rounds};
}
Barrier two_aivs(Group& g, const Core& c) { return {&g.aivs, c.sub, &g.aiv_rounds}; }

// A participant's arrival at cycle t on `id`; `completed`: the arrival completed the round.
void round_arrive(RoundTimes& r, int id, double t, bool completed) {
  r.arriving[size_t(id)] = std::max(r.arriving[size_t(id)], t);
  if (!completed) return;
  r.done[size_t(id)].push_back(r.arriving[size_t(id)]);
  r.arriving[size_t(id)] = 0;
}
double round_take(RoundTimes& r, int core, int id) {
  size_t& n = r.taken[{core, id}];
  const auto& done = r.done[size_t(id)];
  return n < done.size() ? done[n++] : 0.0;
}

void mode2_set(Group& g, Core& c, int pipe, int id) {
  const std::string err = g.flags.set(c.sub, id);
  DGA_REQUIRE(err.empty(), kRuntime, "cross-core", "CrossCoreSetFlag on pipe ", nm::pipe_name(pipe), ": ", err);
  const double at = set_cycle(c, pipe);
  if (c.sub >= 0) {
    g.ffts_clocks.from_aiv[size_t(c.sub)][size_t(id)].push_back(c.hazards.clock_of(pipe));
    g.ffts_clocks.from_aiv_at[size_t(c.sub)][size_t(id)].push_back(at);
    return;
  }
  for (int v = 0; v < 2; ++v) {
    g.ffts_clocks.to_aiv[size_t(v)][size_t(id)].push_back(aic_set_clock(g, pipe, v));
    g.ffts_clocks.to_aiv_at[size_t(v)][size_t(id)].push_back(at);
  }
}

// The cycle of the oldest set a wait takes from `q`.
double pop_cycle(std::deque<double>& q) {
  if (q.empty()) return 0;
  const double t = q.front();
  q.pop_front();
  return t;
}

void mode2_take(Group& g, Core& c, int pipe, int id) {
  g.flags.take(c.sub, id);
  if (c.sub >= 0) {
    auto& q = g.ffts_clocks.to_aiv[size_t(c.sub)][size_t(id)];
    aiv_wait_order(c, pipe, q.front());
    q.pop_front();
    wait_cycle(c, pipe, pop_cycle(g.ffts_clocks.to_aiv_at[size_t(c.sub)][size_t(id)]));
    return;
  }
  for (int v = 0; v < 2; ++v) {
    auto& q = g.ffts_clocks.from_aiv[size_t(v)][size_t(id)];
    aic_wait_order(g, pipe, v, q.front());
    q.pop_front();
    wait_cycle(c, pipe, pop_cycle(g.ffts_clocks.from_aiv_at[size_t(v)][size_t(id)]));
  }
}
}  // namespace

// CrossCoreSetFlag, modes 0-2: pipes PIPE_V, M, MTE1, MTE2, MTE3, FIX (not S, not ALL); mode 1 syncs the
// two AIVs of a group, so only an AIV sets it.
void cross_set(int pipe, uint64_t msg) {
  guard("ffts_cross_core_sync", [&] {
    Group& g = group("CrossCoreSetFlag");
    Core& c = current();
    const int mode = int(msg >> kModeShift) & kModeMask, id = int(msg >> kIdShift) & kIdMask;
    DGA_REQUIRE(pipe != kPipeS && pipe != nm::kPipeAll, kRuntime, "pipe", "CrossCoreSetFlag with mode ", mode,
                " on ", nm::pipe_name(pipe), " (modes 0-2 do not allow PIPE_S or PIPE_ALL)");
    DGA_REQUIRE(mode == kModeAll || mode == kModeAivs || mode == kModeAicAiv, kNotImplemented, "modeId",
                "cross-core mode ", mode, " is not one of the 950's modes 0, 1, 2 (4: set_intra_block)");
    if (mode == kModeAicAiv) return mode2_set(g, c, pipe, id);
    DGA_REQUIRE(mode == kModeAll || c.sub >= 0, kRuntime, "modeId", "CrossCoreSetFlag with mode 1 on the AIC (mode 1 syncs the two AIVs)");
    const Barrier b = mode == kModeAll ? all_cores(g, c) : two_aivs(g, c);
    const int before = b.flags->count(b.core, id);
    const std::string err = b.flags->set(b.core, id);
    DGA_REQUIRE(err.empty(), kRuntime, "cross-core", "CrossCoreSetFlag (mode ", mode, ") on pipe ",
                nm::pipe_name(pipe), ": ", err);
    // The set completed the round when it counted for every participant (its own counter grew).
    round_arrive(*b.rounds, id, set_cycle(c, pipe), b.flags->count(b.core, id) > before);
    g.barrier_clocks[size_t(g.slot)][size_t(id)] = c.hazards.clock_of(pipe);
  });
}

// CrossCoreWaitFlag, modes 0-2 (wait_flag_dev names no mode): a core has one counter per id, which a mode-2
// set by the other side, a completed mode-0 round or (an AIV) a completed mode-1 round counts. An id with
// counts from two modes at once is refused: the page requires a core to finish an id's syncs in one mode
// before using it in another.
void cross_wait(int pipe, int id) {
  guard("wait_flag_dev", [&] {
    Group& g = group("CrossCoreWaitFlag");
    Core& c = current();
    const Barrier all = all_cores(g, c);
    const bool aiv = c.sub >= 0;
    const auto ready = [&g, &c, all, aiv, id] {
      return g.flags.can_wait(c.sub, id) || all.flags->can_wait(all.core, id) || (aiv && g.aivs.can_wait(c.sub, id));
    };
    const std::string what = c.name + " waits for cross-core flag " + std::to_string(id) + " on pipe " + nm::pipe_name(pipe);
    if (!g_launch->scheduler->wait_until(scheduler_slot(g, g.slot), ready, what)) return;
    const bool m2 = g.flags.can_wait(c.sub, id), m0 = all.flags->can_wait(all.core, id);
    const bool m1 = aiv && g.aivs.can_wait(c.sub, id);
    DGA_REQUIRE(int(m0) + int(m1) + int(m2) == 1, kRuntime, "cross-core", c.name, " waits on flag ", id,
                ", which has counts from more than one of modes 0, 1, 2 (an id changes mode only after its syncs)");
    if (m2) return mode2_take(g, c, pipe, id);
    const Barrier b = m0 ? all : two_aivs(g, c);
    b.flags->take(b.core, id);
    wait_cycle(c, pipe, round_take(*b.rounds, b.core, id));
    c.hazards.order_after(pipe == kPipeS ? -1 : pipe, g.barrier_clocks[size_t(g.slot)][size_t(id)]);
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
    if (c.sub >= 0) {
      g.intra_clocks.from_aiv[size_t(c.sub)][size_t(id)].push_back(c.hazards.clock_of(pipe));
      g.intra_clocks.from_aiv_at[size_t(c.sub)][size_t(id)].push_back(set_cycle(c, pipe));
    } else {
      g.intra_clocks.to_aiv[size_t(t.sub)][size_t(t.id)].push_back(aic_set_clock(g, pipe, t.sub));
      g.intra_clocks.to_aiv_at[size_t(t.sub)][size_t(t.id)].push_back(set_cycle(c, pipe));
    }
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
    if (!g_launch->scheduler->wait_until(scheduler_slot(g, g.slot), [&g, &c, id] { return g.intra.can_wait(c.sub, id); }, what)) return;
    g.intra.take(c.sub, id);
    if (c.sub >= 0) {
      auto& q = g.intra_clocks.to_aiv[size_t(c.sub)][size_t(id)];
      aiv_wait_order(c, pipe, q.front());
      q.pop_front();
      wait_cycle(c, pipe, pop_cycle(g.intra_clocks.to_aiv_at[size_t(c.sub)][size_t(id)]));
      return;
    }
    const int v = id / nm::IntraBlockFlags::kAivIds;  // the AIV whose sets count for this id
    auto& q = g.intra_clocks.from_aiv[size_t(v)][size_t(id % nm::IntraBlockFlags::kAivIds)];
    aic_wait_order(g, pipe, v, q.front());
    q.pop_front();
    wait_cycle(c, pipe, pop_cycle(g.intra_clocks.from_aiv_at[size_t(v)][size_t(id % nm::IntraBlockFlags::kAivIds)]));
  });
}

namespace {
// The Fixpipe into the UBs: fp32 at the L0C -> UB rate, each UB's half at once in the dual mode.
Timed fixpipe_ub_cost(const float* src, uint64_t m, uint64_t n, bool dual) {
  const auto& k = deepgemm_ascend::arch::Ascend950::kTiming;
  const size_t l0c = size_t((m + 15) / 16 * 16 * (n + 15) / 16 * 16 * 4);
  const double rate = k.fix_ub_bytes_per_cycle * (dual ? 2 : 1);
  return {.cycles = k.fix_fixed_cycles + double(m * n * 4) / rate, .skippable = true, .l0c = src, .l0c_bytes = l0c};
}
}  // namespace

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
  }, unit_flag, fixpipe_ub_cost(src, m, n, dual != 0));
}

}  // namespace dga_model
