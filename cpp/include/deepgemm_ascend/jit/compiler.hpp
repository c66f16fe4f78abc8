// Compilers of the JIT module: the host C++ compiler (host kernels) and bisheng (NPU kernels, when
// CANN is installed). A compiler turns one source file into a shared object; its identity (path and
// version line) is part of every cache key.
#pragma once

#include <string>
#include <vector>

namespace deepgemm_ascend::jit {

struct Compiler {
  std::string kind;     // "host" or "bisheng"
  std::string path;     // executable
  std::string version;  // first line of `path --version`
  std::string arch;     // target: "host-<isa flags>" or "dav-3510"
  std::vector<std::string> flags;  // always passed (language level, optimisation, -fPIC -shared, arch)

  // argv of compiling `source` into the shared object `output`.
  std::vector<std::string> command(const std::string& source, const std::string& output,
                                   const std::vector<std::string>& include_dirs,
                                   const std::vector<std::string>& extra_flags) const;
};

// DG_JIT_CXX, else CXX, else "c++"; throws a RuntimeError naming the variable when it cannot run.
const Compiler& host_compiler();
// $ASCEND_HOME_PATH/bin/bisheng (or bisheng on PATH) for `arch` (default dav-3510); RuntimeError
// when CANN is not installed.
Compiler bisheng_compiler(const std::string& arch = "dav-3510");

// Runs argv, capturing stdout + stderr; returns the exit status (-1: could not start) and the output.
int run_command(const std::vector<std::string>& argv, std::string& output);

}  // namespace deepgemm_ascend::jit
