#include "deepgemm_ascend/runtime/npu_model.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::runtime {

namespace {

constexpr const char* kHost = "host";
constexpr const char* kNpuModel = "npu-model";
constexpr int64_t kDefaultMaxMacs = int64_t(1) << 34;
constexpr size_t kErrorBytes = 4096;

struct CGmRegion {  // DgaGmRegion of the model library's C entry (npu_model_launch.h)
  const char* name;
  const void* base;
  size_t bytes;
};
using LaunchFn = int (*)(const char*, unsigned, const void*, const CGmRegion*, size_t, char*, size_t);

std::string check_backend(const std::string& name, const char* source) {
  DGA_REQUIRE(name == kHost || name == kNpuModel, kValue, source, "unknown backend '", name,
              "' (expected 'host' or 'npu-model')");
  return name;
}

// The selection, read on every call on CPU tensors: an atomic, set from DGA_BACKEND at first use.
std::atomic<bool>& model_selected() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("DGA_BACKEND");
    return v && *v && check_backend(v, "DGA_BACKEND") == kNpuModel;
  }()};
  return on;
}

// The library beside this one (the wheel's package directory, the build tree), or DGA_NPU_MODEL_LIB.
std::string library_path() {
  if (const char* v = std::getenv("DGA_NPU_MODEL_LIB"); v && *v) return v;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&npu_model_launch), &info) == 0 || !info.dli_fname) return "libdga_npu_model.so";
  std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string() : self.substr(0, slash + 1)) + "libdga_npu_model.so";
}

struct Loaded {
  LaunchFn launch = nullptr;
  std::string why;
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded r;
    const std::string path = library_path();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      r.why = "the instruction model library could not be loaded (" + std::string(e ? e : path) +
              "); it is built when the AscendC devkit is found at configure time (DGA_ASC_DEVKIT)";
      return r;
    }
    r.launch = reinterpret_cast<LaunchFn>(dlsym(h, "dga_npu_model_launch"));
    if (!r.launch) r.why = path + " has no dga_npu_model_launch";
    return r;
  }();
  return l;
}

}  // namespace

std::string backend() { return npu_model_selected() ? kNpuModel : kHost; }

void set_backend(const std::string& name) { model_selected().store(check_backend(name, "backend") == kNpuModel); }

bool npu_model_selected() { return model_selected().load(std::memory_order_relaxed); }

bool npu_model_available() { return loaded().launch != nullptr; }
std::string npu_model_unavailable_reason() { return loaded().why; }
std::string npu_model_library_path() { return library_path(); }

namespace {
std::mutex g_log_mu;
std::vector<std::string> g_log;
}  // namespace

std::vector<std::string> take_npu_model_launches() {
  const std::lock_guard<std::mutex> lock(g_log_mu);
  return std::exchange(g_log, {});
}

void npu_model_launch(const std::string& entry, unsigned blocks, const void* params,
                      const std::vector<GmRegion>& gm) {
  {
    const std::lock_guard<std::mutex> lock(g_log_mu);
    g_log.push_back(entry);
  }
  const Loaded& l = loaded();
  DGA_REQUIRE(l.launch != nullptr, kRuntime, "backend", "npu-model: ", l.why);
  std::string err(kErrorBytes, '\0');
  constexpr int kRefused = -2;
  std::vector<CGmRegion> regions;
  for (const GmRegion& r : gm) regions.push_back({r.name.c_str(), r.base, r.bytes});
  if (const int rc = l.launch(entry.c_str(), blocks, params, regions.data(), regions.size(), err.data(), err.size());
      rc != 0) {
    err.resize(err.find('\0'));
    core::fail(rc == kRefused ? core::ErrorKind::kNotImplemented : core::ErrorKind::kRuntime, "npu-model",
               entry + ": " + err);
  }
}

bool npu_model_timing_only() {
  const char* path = std::getenv("DGA_NPU_MODEL_TIMING");
  const char* only = std::getenv("DGA_NPU_MODEL_TIMING_ONLY");
  return path != nullptr && *path != '\0' && only != nullptr && *only != '\0' && std::string(only) != "0";
}

int64_t npu_model_max_macs() {
  if (npu_model_timing_only()) return std::numeric_limits<int64_t>::max();
  const char* v = std::getenv("DGA_NPU_MODEL_MAX_MACS");
  if (!v || !*v) return kDefaultMaxMacs;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  DGA_REQUIRE(end && *end == '\0' && n > 0, kValue, "DGA_NPU_MODEL_MAX_MACS", "expected a positive integer, got '",
              v, "'");
  return int64_t(n);
}

}  // namespace deepgemm_ascend::runtime
