// The JIT module: kernel sources specialised at first use, compiled once per key and cached on disk.
//
// Key = hash of the generated source, every header it includes (found recursively in the include
// directories, contents hashed), the compiler's path, version line, target arch and flags. Entries live
// in DG_JIT_CACHE_DIR (default ~/.cache/deepgemm_ascend/jit) as <name>_<key>/{kernel source, kernel.so,
// kernel.so.sum, command.txt}; they are compiled in a private temporary folder and renamed into place
// atomically, so concurrent processes building the same key never see a partial entry (the loser of the
// rename uses the winner's). An entry whose checksum or dlopen fails is rebuilt. DG_JIT_DEBUG=1 logs
// hits, builds and timings; DG_JIT_PRINT_COMPILER_COMMAND=1 prints each compiler command.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "deepgemm_ascend/jit/compiler.hpp"

namespace deepgemm_ascend::jit {

struct BuildRequest {
  std::string name;    // kernel name (letters, digits, '_'), part of the entry's folder name
  std::string source;  // the specialised translation unit
  std::vector<std::string> include_dirs;
  std::vector<std::string> flags;  // defines, libraries, ...
};

struct BuildResult {
  std::string path;  // the shared object
  std::string key;
  bool cache_hit = false;
};

std::string cache_dir();
// Files the source includes, transitively, that resolve in the include directories (sorted).
std::vector<std::string> included_files(const std::string& source, const std::vector<std::string>& include_dirs);
std::string cache_key(const BuildRequest& req, const Compiler& cc);
// Compiles, or reuses a valid cached entry.
BuildResult build(const BuildRequest& req, const Compiler& cc);

// A loaded shared object (kept loaded for the life of the process).
class Library {
 public:
  explicit Library(const std::string& path);  // throws RuntimeError with dlerror()
  void* symbol(const char* name) const;       // throws RuntimeError naming the symbol
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
};

// build() then dlopen, memoised per key in this process.
std::shared_ptr<Library> load(const BuildRequest& req, const Compiler& cc, BuildResult* result = nullptr);

}  // namespace deepgemm_ascend::jit
