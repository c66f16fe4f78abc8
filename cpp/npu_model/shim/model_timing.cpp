// The timing mode of a launch (model_timing.hpp): the launch's memory system and cores' timings, and its
// report, one JSON line appended to DGA_NPU_MODEL_TIMING's file.
#include "model_timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"

namespace dga_model {

namespace {

using deepgemm_ascend::arch::Ascend950;

struct TimedCore {
  std::string name;
  std::unique_ptr<nm::CoreTiming> timing;
};

struct LaunchTiming {
  std::string kernel, path, trace_prefix;
  unsigned blocks = 0;
  bool only = false;
  nm::MemoryTiming memory{Ascend950::kTiming};
  std::vector<TimedCore> cores;
};
LaunchTiming* g_launch_timing = nullptr;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// The group of a core's name: "group 3" of "group 3 AIV1", else the name.
std::string group_of(const std::string& core) {
  if (core.rfind("group ", 0) != 0) return core;
  const size_t end = core.find(' ', 6);
  return core.substr(0, end);
}

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

// A core's part of the report: when it ends, its critical (busiest) pipe and each pipe it used.
void write_core(std::FILE* f, const TimedCore& c, double us) {
  const auto& stats = c.timing->stats();
  int critical = 0;
  for (int p = 0; p < nm::kPipes; ++p)
    if (stats[size_t(p)].busy > stats[size_t(critical)].busy) critical = p;
  const double end = c.timing->end();
  std::fprintf(f, "{\"name\":\"%s\",\"end_us\":%.4f,\"critical\":\"%s\",\"pipes\":{", escape(c.name).c_str(), end * us,
               nm::pipe_name(critical));
  bool first = true;
  for (int p = 0; p < nm::kPipes; ++p) {
    const nm::PipeStats& s = stats[size_t(p)];
    if (s.instructions == 0) continue;
    std::fprintf(f, "%s\"%s\":{\"busy\":%.5f,\"busy_us\":%.4f,\"flag_wait_us\":%.4f,\"memory_wait_us\":%.4f,"
                    "\"instructions\":%llu}",
                 first ? "" : ",", nm::pipe_name(p), end > 0 ? s.busy / end : 0.0, s.busy * us, s.flag_wait * us,
                 s.memory_wait * us, static_cast<unsigned long long>(s.instructions));
    first = false;
  }
  std::fprintf(f, "}}");
}

void write_trace(std::FILE* f, const TimedCore& c, double us) {
  std::fprintf(f, "{\"name\":\"%s\",\"events\":[", escape(c.name).c_str());
  bool first = true;
  for (const nm::TraceEvent& e : c.timing->trace()) {
    std::fprintf(f, "%s[\"%s\",%.4f,%.4f,\"%s\"]", first ? "" : ",", nm::pipe_name(e.pipe), e.start * us, e.end * us,
                 e.name);
    first = false;
  }
  std::fprintf(f, "]}");
}

void write_report(const LaunchTiming& l) {
  const auto& k = Ascend950::kTiming;
  const double us = 1e-3 / k.clock_ghz;  // microseconds per cycle
  double cycles = 0;
  for (const TimedCore& c : l.cores) cycles = std::max(cycles, c.timing->end());
  std::FILE* f = std::fopen(l.path.c_str(), "a");
  if (f == nullptr) {
    std::fprintf(stderr, "npu_model: timing: cannot append to %s\n", l.path.c_str());
    return;
  }
  const nm::MemoryStats& m = l.memory.stats();
  std::fprintf(f, "{\"kernel\":\"%s\",\"blocks\":%u,\"time_us\":%.4f,\"cycles\":%.1f,\"clock_ghz\":%.4f,"
                  "\"launch_us\":%.3f,\"timing_only\":%s,\"memory\":{\"hbm_read_bytes\":%llu,\"hbm_write_bytes\":%llu,"
                  "\"l2_hit_bytes\":%llu,\"l2_write_bytes\":%llu},\"cores\":[",
               escape(l.kernel).c_str(), l.blocks, cycles * us + k.launch_us, cycles, k.clock_ghz, k.launch_us,
               l.only ? "true" : "false", static_cast<unsigned long long>(m.hbm_read),
               static_cast<unsigned long long>(m.hbm_write), static_cast<unsigned long long>(m.l2_hit),
               static_cast<unsigned long long>(m.l2_write));
  for (size_t i = 0; i < l.cores.size(); ++i) {
    if (i > 0) std::fputc(',', f);
    write_core(f, l.cores[i], us);
  }
  std::fprintf(f, "],\"trace\":[");
  bool first = true;
  for (const TimedCore& c : l.cores) {
    if (c.timing->trace().empty()) continue;
    if (!first) std::fputc(',', f);
    write_trace(f, c, us);
    first = false;
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

}  // namespace

TimingScope::TimingScope(const std::string& kernel, unsigned blocks) {
  const char* path = env("DGA_NPU_MODEL_TIMING");
  if (path == nullptr || g_launch_timing != nullptr) return;
  g_launch_timing = new LaunchTiming;
  g_launch_timing->kernel = kernel, g_launch_timing->path = path, g_launch_timing->blocks = blocks;
  const char* only = env("DGA_NPU_MODEL_TIMING_ONLY");
  g_launch_timing->only = only != nullptr && std::string(only) != "0";
  if (const char* t = env("DGA_NPU_MODEL_TRACE")) g_launch_timing->trace_prefix = t;
}

TimingScope::~TimingScope() {
  if (g_launch_timing == nullptr) return;
  write_report(*g_launch_timing);
  delete g_launch_timing;
  g_launch_timing = nullptr;
}

nm::CoreTiming* core_timing(const std::string& core_name) {
  LaunchTiming* l = g_launch_timing;
  if (l == nullptr) return nullptr;
  if (l->trace_prefix.empty()) l->trace_prefix = group_of(core_name);  // the first core's group
  const bool trace = core_name.rfind(l->trace_prefix, 0) == 0 &&
                     (core_name.size() == l->trace_prefix.size() || core_name[l->trace_prefix.size()] == ' ');
  l->cores.push_back({core_name, std::make_unique<nm::CoreTiming>(Ascend950::kTiming, &l->memory, trace)});
  return l->cores.back().timing.get();
}

bool timing_on() { return g_launch_timing != nullptr; }

bool timing_only() { return g_launch_timing != nullptr && g_launch_timing->only; }

}  // namespace dga_model
