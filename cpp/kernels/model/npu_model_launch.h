// The C entry of libdga_npu_model.so (runtime/npu_model.cpp loads it): runs NPU launcher `entry` on
// `blocks` cores of the instruction model. Returns 0; -1 with the first model error in `err` (NUL-ended),
// or -2 when the launch needs something the model does not implement.
#pragma once

#include <cstddef>

extern "C" {
typedef int (*DgaNpuModelLaunchFn)(const char* entry, unsigned blocks, const void* params, char* err, size_t err_len);
int dga_npu_model_launch(const char* entry, unsigned blocks, const void* params, char* err, size_t err_len);
}
