// The NPU GEMM entries, each named once: the families (operand type and scale handling) and the entry
// kinds (problem source and launch parameters). Everything else is generated from these two lists: the
// kernels and launchers of the .asc files (DGA_NPU_GEMM_ASC_ENTRIES), the instruction model's launchers
// (cpp/npu_model/shim/entries_gemm.cpp), the JIT's sources (jit/npu_gemm_jit.cpp) and the dispatch's
// launcher names (npu_gemm_launcher). Symbols are derived by token pasting here, nowhere else. C++17
// (the devkit-facing translation units) and device-safe: macros and constant data only.
#pragma once

// X(family, Elem, Scales, Cores): Elem the devkit's operand type, Scales a tile::npu::Scales enumerator
// (npu_target.hpp), Cores `cube` (cube only) or `mix` (the cube core and its two vector cores).
#define DGA_NPU_GEMM_FAMILY_BF16(X) X(bf16, bfloat16_t, kNone, cube)
#define DGA_NPU_GEMM_FAMILY_FP8_MX(X) X(fp8_mx, fp8_e4m3fn_t, kMx, cube)
#define DGA_NPU_GEMM_FAMILY_FP4_MX(X) X(fp4_mx, fp4x2_e2m1_t, kMx, cube)
#define DGA_NPU_GEMM_FAMILY_FP8_BLOCK(X) X(fp8_block, fp8_e4m3fn_t, kPromoted, mix)
#define DGA_NPU_GEMM_FAMILIES(X)                                                   \
  DGA_NPU_GEMM_FAMILY_BF16(X) DGA_NPU_GEMM_FAMILY_FP8_MX(X) DGA_NPU_GEMM_FAMILY_FP4_MX(X) \
  DGA_NPU_GEMM_FAMILY_FP8_BLOCK(X)

// X(kind, suffix, Params, run, args...): suffix of the symbols (empty for the dense GEMM), the launch
// parameters (kernel/launch_abi.hpp) and the launch function (npu_gemm_launch.hpp); args are passed on.
// The dense GEMM comes first: the JIT's interface names it "" (jit/npu_gemm_jit.hpp).
#define DGA_NPU_GEMM_KINDS(X, ...)                                                   \
  X(dense, , DgaGemmParams, run_gemm, __VA_ARGS__)                                   \
  X(masked, _masked, DgaMaskedGemmParams, run_masked_gemm, __VA_ARGS__)              \
  X(contiguous, _contiguous, DgaContiguousGemmParams, run_contiguous_gemm, __VA_ARGS__) \
  X(k_grouped, _k_grouped, DgaKGroupedGemmParams, run_k_grouped_gemm, __VA_ARGS__)

// The symbols of (family, kind suffix): the device kernel and its host launcher, of the library
// (dga_gemm_bf16_masked, dga_npu_launch_gemm_bf16_masked) and of a JIT entry.
#define DGA_NPU_GEMM_PASTE_(a, b, c) a##b##c
#define DGA_NPU_GEMM_PASTE(a, b, c) DGA_NPU_GEMM_PASTE_(a, b, c)
#define DGA_NPU_GEMM_KERNEL(family, suffix) DGA_NPU_GEMM_PASTE(dga_gemm_, family, suffix)
#define DGA_NPU_GEMM_LAUNCHER(family, suffix) DGA_NPU_GEMM_PASTE(dga_npu_launch_gemm_, family, suffix)
#define DGA_NPU_GEMM_JIT_KERNEL(family, suffix) DGA_NPU_GEMM_PASTE(dga_jit_gemm_, family, suffix)
#define DGA_NPU_GEMM_JIT_LAUNCHER(family, suffix) DGA_NPU_GEMM_PASTE(dga_jit_launch_gemm_, family, suffix)
#define DGA_NPU_GEMM_STR_(x) #x
#define DGA_NPU_GEMM_STR(x) DGA_NPU_GEMM_STR_(x)

// An .asc file's entries of one family (DGA_NPU_GEMM_FAMILY_<F>(DGA_NPU_GEMM_ASC_ENTRIES)): per kind the
// __global__ kernel and its host launcher (looked up with dlsym by the ACL backend, asynchronous on
// `stream`; block_dim counts cube cores, each with its two vector cores in a mix kernel). The launch goes
// through DGA_NPU_GEMM_LAUNCH(kernel, block_dim, stream, params), which the .asc file defines with the
// <<<...>>> launch written out: the CPU-debug check rewrites that syntax in the .asc text only.
#define DGA_NPU_GEMM_CORE_cube __cube__
#define DGA_NPU_GEMM_CORE_mix
#define DGA_NPU_GEMM_TASK_cube
#define DGA_NPU_GEMM_TASK_mix KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
#define DGA_NPU_GEMM_MIX_cube false
#define DGA_NPU_GEMM_MIX_mix true
#define DGA_NPU_GEMM_ASC_ENTRY(kind, suffix, Params, run, family, Elem, S, cores)                         \
  extern "C" __global__ __aicore__ DGA_NPU_GEMM_CORE_##cores void DGA_NPU_GEMM_KERNEL(family, suffix)(Params p) { \
    DGA_NPU_GEMM_TASK_##cores deepgemm_ascend::tile::npu::run<Elem, deepgemm_ascend::tile::npu::Scales::S>(p); \
  }                                                                                                      \
  extern "C" int DGA_NPU_GEMM_LAUNCHER(family, suffix)(uint32_t block_dim, void* stream, const Params* params) { \
    DGA_NPU_GEMM_LAUNCH(DGA_NPU_GEMM_KERNEL(family, suffix), block_dim, stream, *params);                \
    return 0;                                                                                            \
  }
#define DGA_NPU_GEMM_ASC_ENTRIES(family, Elem, S, cores) \
  DGA_NPU_GEMM_KINDS(DGA_NPU_GEMM_ASC_ENTRY, family, Elem, S, cores)

namespace deepgemm_ascend::kernel {

#define DGA_NPU_GEMM_ENUM_(name, ...) name,
enum class NpuGemmFamily { DGA_NPU_GEMM_FAMILIES(DGA_NPU_GEMM_ENUM_) };
enum class NpuGemmKind { DGA_NPU_GEMM_KINDS(DGA_NPU_GEMM_ENUM_, ) };
#undef DGA_NPU_GEMM_ENUM_

// A family as the JIT writes it into a source: its name, operand type, scale handling, and whether its
// vector cores take part (a mix kernel).
struct NpuGemmFamilyInfo {
  const char* name;
  const char* elem;
  const char* scales;
  bool mix;
};
#define DGA_NPU_GEMM_FAMILY_INFO_(family, Elem, S, cores) \
  {#family, #Elem, #S, DGA_NPU_GEMM_MIX_##cores},
inline constexpr NpuGemmFamilyInfo kNpuGemmFamilies[] = {DGA_NPU_GEMM_FAMILIES(DGA_NPU_GEMM_FAMILY_INFO_)};
#undef DGA_NPU_GEMM_FAMILY_INFO_

// A kind: its name (the symbols' suffix without the underscore; "dense" has none), parameters and launch
// function.
struct NpuGemmKindInfo {
  const char* name;
  const char* params;
  const char* run;
};
#define DGA_NPU_GEMM_KIND_INFO_(kind, suffix, Params, run, ...) {#kind, #Params, #run},
inline constexpr NpuGemmKindInfo kNpuGemmKinds[] = {DGA_NPU_GEMM_KINDS(DGA_NPU_GEMM_KIND_INFO_, )};
#undef DGA_NPU_GEMM_KIND_INFO_

inline constexpr int kNpuGemmFamilyCount = int(sizeof(kNpuGemmFamilies) / sizeof(kNpuGemmFamilies[0]));
inline constexpr int kNpuGemmKindCount = int(sizeof(kNpuGemmKinds) / sizeof(kNpuGemmKinds[0]));

// The symbols of one entry: the device kernel and its launcher, of the library and of a JIT entry.
struct NpuGemmSymbols {
  const char* kernel;
  const char* launcher;
  const char* jit_kernel;
  const char* jit_launcher;
};
#define DGA_NPU_GEMM_SYMBOLS_(kind, suffix, Params, run, family)                                   \
  {DGA_NPU_GEMM_STR(DGA_NPU_GEMM_KERNEL(family, suffix)), DGA_NPU_GEMM_STR(DGA_NPU_GEMM_LAUNCHER(family, suffix)), \
   DGA_NPU_GEMM_STR(DGA_NPU_GEMM_JIT_KERNEL(family, suffix)),                                      \
   DGA_NPU_GEMM_STR(DGA_NPU_GEMM_JIT_LAUNCHER(family, suffix))},
#define DGA_NPU_GEMM_SYMBOL_ROW_(family, ...) {DGA_NPU_GEMM_KINDS(DGA_NPU_GEMM_SYMBOLS_, family)},
inline constexpr NpuGemmSymbols kNpuGemmSymbols[kNpuGemmFamilyCount][kNpuGemmKindCount] = {
    DGA_NPU_GEMM_FAMILIES(DGA_NPU_GEMM_SYMBOL_ROW_)};
#undef DGA_NPU_GEMM_SYMBOL_ROW_
#undef DGA_NPU_GEMM_SYMBOLS_

inline constexpr const NpuGemmFamilyInfo& npu_gemm_family(NpuGemmFamily f) { return kNpuGemmFamilies[int(f)]; }
inline constexpr const NpuGemmKindInfo& npu_gemm_kind(NpuGemmKind k) { return kNpuGemmKinds[int(k)]; }
inline constexpr const NpuGemmSymbols& npu_gemm_symbols(NpuGemmFamily f, NpuGemmKind k) {
  return kNpuGemmSymbols[int(f)][int(k)];
}

}  // namespace deepgemm_ascend::kernel
