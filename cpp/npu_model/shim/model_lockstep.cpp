// The cores of a cube-only or vector-only launch in the timing mode: every core a thread under one
// scheduler (npu_model/group.hpp) with epochs, so that the cores advance through simulated time together
// and claim the shared L2 / HBM bandwidth roughly in time order (run one after another, the cores run last
// would find the busy periods taken). The cores do not wait on each other; their checks are their own, as in
// the functional run (begin_core / end_core), and the first core's error in core order is the launch's.
// Plain C++ (no devkit headers).
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/group.hpp"
#include "model_core.hpp"
#include "model_runner.hpp"
#include "model_timing.hpp"

namespace dga_model {

namespace {

// The kernel's code on core k; an exception that is not a model error is reported as the core's.
void run_one(int k, const std::function<void(int)>& body, bool vector, std::exception_ptr& thrown) {
  try {
    try {
      body(vector ? 1 : 0);
    } catch (const deepgemm_ascend::core::Error&) {
      throw;
    } catch (const std::exception& e) {
      deepgemm_ascend::core::fail(deepgemm_ascend::core::ErrorKind::kRuntime, "npu_model", "core ", k, ": ", e.what());
    }
  } catch (...) {
    thrown = std::current_exception();
  }
}

}  // namespace

void run_lockstep(const std::string& kernel, int cores, bool vector, const std::function<void(int)>& switch_core,
                  const std::function<void(int)>& body) {
  std::vector<std::unique_ptr<Core>> core;
  for (int k = 0; k < cores; ++k) {
    switch_core(k);  // each core's checkers see its own buffers
    core.push_back(std::make_unique<Core>(kernel, (vector ? "AIV core " : "core ") + std::to_string(k), vector ? 0 : -1));
  }
  nm::GroupScheduler scheduler(cores, [&](int k) {
    switch_core(k);
    select(core[size_t(k)].get());
  });
  scheduler.use_epochs(kEpochCycles);
  for (int k = 0; k < cores; ++k) core[size_t(k)]->scheduler = &scheduler, core[size_t(k)]->slot = k;
  std::vector<std::exception_ptr> thrown(static_cast<size_t>(cores));  // an exception that left a core's kernel
  scheduler.run([&](int k) { run_one(k, body, vector, thrown[size_t(k)]); }, 0);
  // The functional run's order: core 0's error first (it stops at the first core with one).
  std::string error;
  auto kind = deepgemm_ascend::core::ErrorKind::kRuntime;
  for (int k = 0; k < cores && error.empty(); ++k) {
    Core& c = *core[size_t(k)];
    if (thrown[size_t(k)]) {
      select(nullptr);
      std::rethrow_exception(thrown[size_t(k)]);
    }
    select(&c);
    guard("end of kernel", [&] { c.events.finish(); });
    if (!c.error.empty()) error = c.error, kind = c.error_kind;
  }
  select(nullptr);
  if (!error.empty()) deepgemm_ascend::core::fail(kind, "npu_model", error);
}

}  // namespace dga_model
