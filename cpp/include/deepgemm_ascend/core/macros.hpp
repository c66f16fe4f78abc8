// Portability macros shared by host code and by kernel headers that bisheng compiles.
// Kernel-side headers (core/convert, layout/fractal, tile, block, kernel) stay within C++17 and
// reach AscendC qualifiers only through these macros.
#pragma once

// ASCENDC_CPU_DEBUG: the devkit headers compiled for the host (type checks, the instruction model);
// __CCE_AICORE__ / __DAV_C310__: bisheng compiling for an AI Core.
#if defined(ASCENDC_CPU_DEBUG) || defined(__CCE_AICORE__) || defined(__DAV_C310__)
#define DGA_NPU_DEVICE 1
#define DGA_DEVICE __aicore__ inline
#define DGA_GM __gm__
#else
#define DGA_NPU_DEVICE 0
#define DGA_DEVICE inline
#define DGA_GM
#endif

// Helpers both the host library and the kernels call (index math, geometry).
#if DGA_NPU_DEVICE
#define DGA_HOST_DEVICE __aicore__ inline
#else
#define DGA_HOST_DEVICE inline
#endif

// Host loops that vectorise: one clone per x86 vector width (AVX-512 as x86-64-v4, AVX2, baseline), picked at
// load time (the library's baseline is x86-64); nothing elsewhere.
#if defined(__x86_64__) && defined(__GNUC__) && !DGA_NPU_DEVICE
#define DGA_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define DGA_VECTOR_CLONES
#endif
