#include "deepgemm_ascend/runtime/config.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace deepgemm_ascend::runtime {

namespace {
bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

#ifdef DGA_CHECKED_DEFAULT
constexpr bool kCheckedDefault = true;
#else
constexpr bool kCheckedDefault = false;
#endif

std::atomic<bool>& checked_flag() {
  static std::atomic<bool> f{kCheckedDefault || env_flag("DGA_CHECKED")};
  return f;
}
}  // namespace

bool checked_mode() { return checked_flag().load(std::memory_order_relaxed); }
void set_checked_mode(bool on) { checked_flag().store(on); }
bool print_configs() { return env_flag("DG_PRINT_CONFIGS"); }
bool jit_gemm() {
  static const bool on = env_flag("DGA_JIT");
  return on;
}

}  // namespace deepgemm_ascend::runtime
