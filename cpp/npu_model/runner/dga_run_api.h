// The launch entry points of a program npu_run.py builds for the instruction model (launch.cpp), shared by
// the program's lowered launches (dga_run.h) and their implementation. Plain C++ (no devkit headers).
#pragma once

#include <functional>

namespace dga_run {

// Runs body() on `blocks` cores of the model (cores: 0 cube, 1 mix, 2 vector); a model error ends the
// program with its message.
void launch_kernel(const char* name, unsigned blocks, int cores, const std::function<void()>& body);
// A mix kernel: aic() on each group's cube core, aiv() on its two vector cores.
void launch_mix(const char* name, unsigned blocks, const std::function<void()>& aic, const std::function<void()>& aiv);

// A vector-pass kernel, its arguments by address.
using AivKernel = void (*)(void* const* args);
// The vector pass's kernel of a launch site (its lambda type's name), loaded from DGA_RUN_AIV_LIB.
AivKernel find_aiv(const char* key);

}  // namespace dga_run

// Called by the vector pass's library as it loads (exported by the program: -Wl,--export-dynamic-symbol).
extern "C" void dga_run_register_aiv(const char* key, dga_run::AivKernel kernel);
