// Included first into every source of an AscendC program that npu_run.py builds for the instruction model:
// the devkit in CPU-debug mode, what the program's compiler (bisheng) provides beyond it, and the kernel
// launch the `<<<blocks, l2ctrl, stream>>>` syntax lowers to.
//   * The pass: bisheng compiles the kernels once per core type with g_coreType a constant (SPLIT_CORE_CUBE /
//     SPLIT_CORE_VEC); CPU-debug mode makes it a variable, which templates cannot take as an argument. A
//     program is built per pass with DGA_RUN_CORE_TYPE (AscendC::AIC or AIV) as that constant.
//   * bisheng's builtins the programs call unqualified (min, max) and its __forceinline__.
//   * half: a literal binary16 type in place of the devkit's CPU-debug class (dga_half.h).
//   * dga_run::launch: npu_run.py rewrites `K<<<b, l2, s>>>(args)` into dga_run::launch(b, l2, s, "K",
//     [](auto&&... a) { K(a...); }, args), which runs the kernel on b cores of the model (launch.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <new>
#include <type_traits>
#include <typeinfo>
#include <utility>

// CPU-debug mode's bf16 class lives in a namespace `bfloat16`, which bisheng's builds do not have: programs
// that name opdev's op::bfloat16 unqualified after `using op::bfloat16;` would find both. The devkit is
// parsed here with that namespace renamed (its five users are all reached from kernel_operator.h).
#define bfloat16 dga_devkit_bfloat16
#include "dga_half.h"  // before the devkit: it replaces the devkit's half
#include "kernel_operator.h"
#undef bfloat16
#include "dga_run_api.h"
#include "model_types.h"  // the model's cube types of the devkit's element types

#ifndef DGA_RUN_CORE_TYPE
#error "DGA_RUN_CORE_TYPE (the pass: AscendC::AIC or AscendC::AIV) is set by npu_run.py"
#endif
#ifndef DGA_RUN_CORES
#error "DGA_RUN_CORES (0 cube, 1 mix, 2 vector: the kernel type of the program) is set by npu_run.py"
#endif

namespace dga_run {
inline constexpr int32_t kPassCoreType = DGA_RUN_CORE_TYPE;

// Mix kernels: the vector pass (the program built again with the AIV constant, DGA_RUN_AIV_PASS, as a
// library) registers each launch site's kernel under the name of its lambda's type, which is the same in
// both passes once its namespaces are named back (npu_run.py renames CATLASS's in the vector pass so that
// the two passes' kernels do not merge); the cube pass's launch finds it there.
// F is a captureless lambda: an empty, trivially copyable class with no state, so any suitably aligned
// storage holds an object of it (an implicit-lifetime type). Programs are C++17, where a closure type cannot
// be default-constructed.
template <class F>
F& stateless() {
  static_assert(std::is_empty_v<F> && std::is_trivially_copyable_v<F>, "a launch site's lambda captures nothing");
  alignas(F) static unsigned char storage[sizeof(F)];
  return *std::launder(reinterpret_cast<F*>(storage));
}
template <class F, class... A, size_t... I>
void call_aiv(void* const* args, std::index_sequence<I...>) {
  stateless<F>()(*static_cast<A*>(args[I])...);
}
template <class F, class... A>
void aiv_kernel(void* const* args) {
  call_aiv<F, A...>(args, std::index_sequence_for<A...>{});
}
template <class F, class... A>
struct AivEntry {
  static inline const bool registered = (dga_run_register_aiv(typeid(F).name(), &aiv_kernel<F, A...>), true);
};

template <class F, class... A>
void launch(uint32_t blocks, void* /* l2ctrl */, void* /* stream: every launch runs at once */, const char* name, F f,
            A... args) {
#if defined(DGA_RUN_AIV_PASS)
  (void)AivEntry<F, A...>::registered;  // the vector pass only registers: its program never runs
#else
  if constexpr (DGA_RUN_CORES == 1) {
    void* ptrs[] = {static_cast<void*>(&args)..., nullptr};
    const AivKernel aiv = find_aiv(typeid(F).name());
    launch_mix(name, blocks, [&] { f(args...); }, [&] { aiv(ptrs); });
  } else {
    launch_kernel(name, blocks, DGA_RUN_CORES, [&] { f(args...); });
  }
#endif
}
}  // namespace dga_run

#define g_coreType ::dga_run::kPassCoreType

// bisheng's per-pass macros, which programs test (`#ifdef __DAV_CUBE__`): defined after the devkit's headers,
// which stay in their CPU-debug configuration (their SPLIT_CORE_* variants would change the CPU runtime's
// per-core state that the model swaps between cores), as the pass's g_coreType above.
#if defined(DGA_RUN_DAV_VEC)
#define __DAV_VEC__ 1
#else
#define __DAV_CUBE__ 1
#endif

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
