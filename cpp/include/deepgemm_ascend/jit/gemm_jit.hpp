// JIT-specialised GEMM entry: the GEMM kernel compiled for one tile configuration (its constants baked
// into the translation unit) and launched through the same backend. On the host it exercises the JIT
// module end to end with the host compiler; the NPU path compiles the same entry with bisheng.
#pragma once

#include <string>
#include <vector>

#include "deepgemm_ascend/kernel/gemm.hpp"

namespace deepgemm_ascend::jit {

// Source of the specialised entry `dga_jit_gemm_block(tile::host::Core*, const kernel::GemmArgs*)`.
std::string gemm_source(const kernel::GemmTiling& t);
// Include directories of the library's headers: the wheel's include/, else the source tree's shared and
// host-target include roots.
std::vector<std::string> header_dirs();
// Linker flags that resolve the library from a JIT'd shared object.
std::vector<std::string> link_flags();

// Builds (or loads) the entry for args.config.tiling and runs it on the host backend.
void launch_gemm(const char* kernel, kernel::GemmArgs& args);

}  // namespace deepgemm_ascend::jit
