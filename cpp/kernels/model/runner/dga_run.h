// Included first into every source of an AscendC program that npu_run.py builds for the instruction model:
// the devkit in CPU-debug mode, what the program's compiler (bisheng) provides beyond it, and the kernel
// launch the `<<<blocks, l2ctrl, stream>>>` syntax lowers to.
//   * The pass: bisheng compiles the kernels once per core type with g_coreType a constant (SPLIT_CORE_CUBE /
//     SPLIT_CORE_VEC); CPU-debug mode makes it a variable, which templates cannot take as an argument. A
//     program is built per pass with DGA_RUN_CORE_TYPE (AscendC::AIC or AIV) as that constant.
//   * bisheng's builtins the programs call unqualified (min, max) and its __forceinline__.
//   * dga_run::launch: npu_run.py rewrites `K<<<b, l2, s>>>(args)` into dga_run::launch(b, l2, s, "K",
//     [](auto&&... a) { K(a...); }, args), which runs the kernel on b cores of the model (launch.cpp).
#pragma once

#include <cstdint>
#include <functional>

#include "kernel_operator.h"
#include "model_types.h"  // the model's cube types of the devkit's element types

#ifndef DGA_RUN_CORE_TYPE
#error "DGA_RUN_CORE_TYPE (the pass: AscendC::AIC or AscendC::AIV) is set by npu_run.py"
#endif
#ifndef DGA_RUN_CORES
#error "DGA_RUN_CORES (0 cube, 1 mix, 2 vector: the kernel type of the program) is set by npu_run.py"
#endif

namespace dga_run {
inline constexpr int32_t kPassCoreType = DGA_RUN_CORE_TYPE;

// Runs body() on `blocks` cores of the model (cores: 0 cube, 1 mix, 2 vector); a model error ends the
// program with its message (launch.cpp).
void launch_kernel(const char* name, unsigned blocks, int cores, const std::function<void()>& body);

template <class F, class... A>
void launch(uint32_t blocks, void* /* l2ctrl */, void* /* stream: every launch runs at once */, const char* name, F f,
            A... args) {
  launch_kernel(name, blocks, DGA_RUN_CORES, [&] { f(args...); });
}
}  // namespace dga_run

#define g_coreType ::dga_run::kPassCoreType

#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif

template <class T>
constexpr T min(T a, T b) {
  return b < a ? b : a;
}
template <class T>
constexpr T max(T a, T b) {
  return a < b ? b : a;
}
