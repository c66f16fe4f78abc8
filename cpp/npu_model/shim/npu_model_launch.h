// The C entry of libdga_npu_model.so (runtime/npu_model.cpp loads it): runs NPU launcher `entry` on
// `blocks` cores of the instruction model. With gm_count > 0, every GM run of a DMA must lie inside one of
// the `gm` regions (a GM access outside them is a model error). Returns 0; -1 with the first model error in
// `err` (NUL-ended), or -2 when the launch needs something the model does not implement.
#pragma once

#include <cstddef>

extern "C" {
struct DgaGmRegion {
  const char* name;  // in errors
  const void* base;
  size_t bytes;
};
typedef int (*DgaNpuModelLaunchFn)(const char* entry, unsigned blocks, const void* params, const DgaGmRegion* gm,
                                   size_t gm_count, char* err, size_t err_len);
int dga_npu_model_launch(const char* entry, unsigned blocks, const void* params, const DgaGmRegion* gm,
                         size_t gm_count, char* err, size_t err_len);
}
