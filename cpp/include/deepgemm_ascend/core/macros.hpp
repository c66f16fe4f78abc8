// Portability macros shared by host code and by kernel headers that bisheng compiles.
// Kernel-side headers (core/convert, layout/fractal, tile, block, kernel) stay within C++17 and
// reach AscendC qualifiers only through these macros.
#pragma once

#if defined(__CCE_KT_TEST__) || defined(__CCE_AICORE__) || defined(__DAV_C310__)
#define DGA_NPU_DEVICE 1
#define DGA_DEVICE __aicore__ inline
#define DGA_GM __gm__
#else
#define DGA_NPU_DEVICE 0
#define DGA_DEVICE inline
#define DGA_GM
#endif

#define DGA_HOST_DEVICE inline
