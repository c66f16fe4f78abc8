#include "cube_dot.hpp"

#include "cube_dot_body.hpp"
#include "deepgemm_ascend/core/cpu_features.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
void cube_dot_baseline(const DotPanels& p) { dot_body::run(p); }

bool use_avx2() {
#if defined(DGA_HOST_X86)
  static const bool yes = core::cpu_features().avx2 && core::cpu_features().fma;
  return yes;
#else
  return false;
#endif
}
}  // namespace

void cube_dot(const DotPanels& p) {
  if (use_avx2()) return cube_dot_avx2(p);
  cube_dot_baseline(p);
}

}  // namespace deepgemm_ascend::npu_model
