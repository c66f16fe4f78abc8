// The kernel launches of a program npu_run.py built for the instruction model: every core of the launch on
// the model (dga_model::run_cores, the same runner the npu-model backend uses), under the model's checks.
// A model error (an instruction outside its documented range, an unmodelled instruction, a hazard, a flag
// left set) ends the program with a non-zero status and the error, since the program cannot go on with a
// result the launch did not produce.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include <dlfcn.h>

#include "model_runner.hpp"
#include "dga_run_api.h"

namespace dga_run {

namespace {
[[noreturn]] void die(const char* name, unsigned blocks, const std::string& why) {
  std::fprintf(stderr, "npu_run: launch of %s on %u cores failed on the instruction model: %s\n", name, blocks,
               why.c_str());
  std::exit(3);
}

// The vector pass's kernels: registered by its library (DGA_RUN_AIV_LIB) when it loads.
std::map<std::string, AivKernel>& aiv_kernels() {
  static std::map<std::string, AivKernel> m;
  return m;
}

// The lambda type's name with the vector pass's renamed namespaces named back (npu_run.py: same lengths).
std::string canonical(std::string key) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"7CatlasZ", "7Catlass"}, {"3tlZ", "3tla"}})
    for (size_t at = key.find(from); at != std::string::npos; at = key.find(from, at + to.size()))
      key.replace(at, from.size(), to);
  return key;
}
}  // namespace


AivKernel find_aiv(const char* key) {
  static void* lib = [] {
    const char* path = std::getenv("DGA_RUN_AIV_LIB");
    void* h = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : nullptr;
    if (!h) std::fprintf(stderr, "npu_run: the vector pass library (DGA_RUN_AIV_LIB) did not load: %s\n",
                         path ? dlerror() : "not set");
    return h;
  }();
  const auto it = aiv_kernels().find(canonical(key));
  if (lib == nullptr || it == aiv_kernels().end()) die(key, 0, "the vector pass has no kernel for this launch");
  return it->second;
}

void launch_mix(const char* name, unsigned blocks, const std::function<void()>& aic, const std::function<void()>& aiv) {
  try {
    dga_model::run_cores(name, blocks, dga_model::Cores::kMix, [&](int slot) { slot == 0 ? aic() : aiv(); });
  } catch (const std::exception& e) {
    die(name, blocks, e.what());
  }
  std::fprintf(stderr, "npu_run: %s ran on %u groups of the instruction model\n", name, blocks);
}

void launch_kernel(const char* name, unsigned blocks, int cores, const std::function<void()>& body) {
  const dga_model::Cores kind = cores == 0 ? dga_model::Cores::kCube
                                : cores == 1 ? dga_model::Cores::kMix
                                             : dga_model::Cores::kVector;
  try {
    dga_model::run_cores(name, blocks, kind, [&](int) { body(); });
  } catch (const std::exception& e) {
    die(name, blocks, e.what());
  }
  std::fprintf(stderr, "npu_run: %s ran on %u cores of the instruction model\n", name, blocks);
}

}  // namespace dga_run

extern "C" void dga_run_register_aiv(const char* key, dga_run::AivKernel kernel) {
  dga_run::aiv_kernels()[dga_run::canonical(key)] = kernel;
}
