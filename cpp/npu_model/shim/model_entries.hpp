// The NPU launchers on the instruction model, one table per kernel family (entries_<family>.cpp: one
// translation unit each, so that a change to one family's kernel headers rebuilds that family alone).
#pragma once

#include <cstddef>

#include "model_runner.hpp"

namespace dga_model {

using Run = void (*)(const void*);  // runs a launcher's run_* template on its params struct


struct Entry {
  const char* name;  // the launcher's name, as in its .asc file
  Run run;
  Cores cores;
};

struct Entries {
  const Entry* data;
  size_t size;
};

Entries gemm_entries();      // the GEMM families: dense, masked, contiguous, K-grouped
Entries mqa_entries();       // MQA logits, plain and paged
Entries mega_moe_entries();  // the Mega MoE steps
Entries vector_entries();    // the AIV-only kernels: HC pre-norm, row conversion, SwiGLU
Entries probe_entries();     // the model's self-test launchers (model_probes.h)

}  // namespace dga_model
