#include "deepgemm_ascend/jit/cache.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::jit {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kFnvPrime = 1099511628211ull;
constexpr uint64_t kSeeds[2] = {1469598103934665603ull, 0x9E3779B97F4A7C15ull};
constexpr size_t kOutputTail = 4000;  // compiler output kept in an error message

// 128-bit FNV-1a (two independent 64-bit lanes), as hex.
class Hasher {
 public:
  Hasher& add(const std::string& s) {
    for (int l = 0; l < 2; ++l) {
      for (unsigned char c : s) h_[l] = (h_[l] ^ c) * kFnvPrime;
      h_[l] = (h_[l] ^ 0xFF) * kFnvPrime;  // field separator
    }
    return *this;
  }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h_[0]),
                  static_cast<unsigned long long>(h_[1]));
    return buf;
  }

 private:
  uint64_t h_[2] = {kSeeds[0], kSeeds[1]};
};

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  DGA_REQUIRE(bool(f), kRuntime, "DG_JIT_CACHE_DIR", "cannot write ", p.string());
}

// `#include "x"` or `#include <x>` of one line, or "".
std::string include_target(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_of("\"<", i + 7);
  if (i == std::string::npos) return "";
  const size_t j = line.find(line[i] == '"' ? '"' : '>', i + 1);
  return j == std::string::npos ? "" : line.substr(i + 1, j - i - 1);
}

void scan(const std::string& text, const fs::path& here, const std::vector<std::string>& dirs,
          std::set<std::string>& found) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::string target = include_target(line);
    if (target.empty()) continue;
    std::vector<fs::path> candidates;
    if (!here.empty()) candidates.push_back(here / target);
    for (const auto& d : dirs) candidates.emplace_back(fs::path(d) / target);
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(c, ec)) continue;
      const std::string p = fs::weakly_canonical(c, ec).string();
      if (found.insert(p).second) scan(read_file(p), fs::path(p).parent_path(), dirs, found);
      break;
    }
  }
}

std::string checksum(const fs::path& p) { return Hasher().add(read_file(p)).hex(); }

std::string random_suffix() {
  std::random_device rd;
  return std::to_string(::getpid()) + "." + std::to_string(rd());
}

void log(const std::string& s) {
  if (env_on("DG_JIT_DEBUG")) std::cerr << "[deepgemm_ascend jit] " << s << "\n";
}

bool entry_valid(const fs::path& dir) {
  std::error_code ec;
  const fs::path so = dir / "kernel.so", sum = dir / "kernel.so.sum";
  return fs::is_regular_file(so, ec) && fs::is_regular_file(sum, ec) && read_file(sum) == checksum(so);
}

// Moves a broken entry out of the way (atomically) and deletes it.
void discard(const fs::path& dir, const fs::path& tmp_root) {
  std::error_code ec;
  const fs::path trash = tmp_root / ("trash." + random_suffix());
  fs::rename(dir, trash, ec);
  fs::remove_all(ec ? dir : trash, ec);
}

void compile_into(const BuildRequest& req, const Compiler& cc, const fs::path& dir) {
  const fs::path src = dir / (cc.kind == "bisheng" ? "kernel.asc" : "kernel.cpp"), so = dir / "kernel.so";
  write_file(src, req.source);
  const auto argv = cc.command(src.string(), so.string(), req.include_dirs, req.flags);
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  write_file(dir / "command.txt", cmd + "\n");
  if (env_on("DG_JIT_PRINT_COMPILER_COMMAND")) std::cerr << "[deepgemm_ascend jit] " << cmd << "\n";
  std::string out;
  const int rc = run_command(argv, out);
  if (out.size() > kOutputTail) out = "..." + out.substr(out.size() - kOutputTail);
  DGA_REQUIRE(rc == 0, kRuntime, "jit", "compiling kernel '", req.name, "' failed (exit status ", rc, "): ", cmd,
              "\n", out);
  std::error_code ec;
  DGA_REQUIRE(fs::is_regular_file(so, ec), kRuntime, "jit", "the compiler reported success but wrote no ",
              so.string());
  write_file(dir / "kernel.so.sum", checksum(so));
}

}  // namespace

std::string cache_dir() {
  if (const char* d = std::getenv("DG_JIT_CACHE_DIR"); d && *d) return d;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/deepgemm_ascend/jit";
  return (fs::temp_directory_path() / "deepgemm_ascend_jit").string();
}

std::vector<std::string> included_files(const std::string& source, const std::vector<std::string>& include_dirs) {
  std::set<std::string> found;
  scan(source, {}, include_dirs, found);
  return {found.begin(), found.end()};
}

std::string cache_key(const BuildRequest& req, const Compiler& cc) {
  Hasher h;
  h.add(req.source).add(cc.kind).add(cc.path).add(cc.version).add(cc.arch);
  for (const auto& f : cc.flags) h.add(f);
  for (const auto& f : req.flags) h.add(f);
  for (const auto& d : req.include_dirs) h.add(d);
  for (const auto& f : included_files(req.source, req.include_dirs)) h.add(f).add(read_file(f));
  return h.hex();
}

BuildResult build(const BuildRequest& req, const Compiler& cc) {
  DGA_REQUIRE(!req.name.empty() && std::all_of(req.name.begin(), req.name.end(),
                                               [](char c) { return std::isalnum((unsigned char)c) || c == '_'; }),
              kValue, "name", "JIT kernel names use letters, digits and '_', got '", req.name, "'");
  const auto start = std::chrono::steady_clock::now();
  BuildResult r;
  r.key = cache_key(req, cc);
  const fs::path root = cache_dir(), tmp_root = root / "tmp", entry = root / (req.name + "_" + r.key);
  std::error_code ec;
  fs::create_directories(tmp_root, ec);
  DGA_REQUIRE(!ec, kRuntime, "DG_JIT_CACHE_DIR", "cannot create ", tmp_root.string(), ": ", ec.message());
  r.path = (entry / "kernel.so").string();
  if (entry_valid(entry)) {
    r.cache_hit = true;
    log("hit " + req.name + " " + r.key);
    return r;
  }
  if (fs::exists(entry, ec)) {
    log("corrupt entry " + entry.string() + ": rebuilding");
    discard(entry, tmp_root);
  }
  const fs::path work = tmp_root / (req.name + "_" + r.key + "." + random_suffix());
  fs::create_directories(work, ec);
  DGA_REQUIRE(!ec, kRuntime, "DG_JIT_CACHE_DIR", "cannot create ", work.string(), ": ", ec.message());
  try {
    compile_into(req, cc, work);
  } catch (...) {
    fs::remove_all(work, ec);
    throw;
  }
  fs::rename(work, entry, ec);
  if (ec) {  // another process installed the same key first: use its entry
    fs::remove_all(work, ec);
    DGA_REQUIRE(entry_valid(entry), kRuntime, "jit", "cache entry ", entry.string(),
                " exists but is not valid after a concurrent build");
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  log("built " + req.name + " " + r.key + " in " + std::to_string(int(ms)) + " ms");
  return r;
}

Library::Library(const std::string& path) : path_(path) {
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  DGA_REQUIRE(handle_ != nullptr, kRuntime, "jit", "cannot load ", path, ": ", ::dlerror());
}

void* Library::symbol(const char* name) const {
  void* p = ::dlsym(handle_, name);
  DGA_REQUIRE(p != nullptr, kRuntime, "jit", path_, " has no symbol '", name, "'");
  return p;
}

std::shared_ptr<Library> load(const BuildRequest& req, const Compiler& cc, BuildResult* result) {
  // Memoised per request in this process (headers are not re-hashed on every launch).
  static std::mutex mu;
  static std::map<std::string, std::pair<BuildResult, std::shared_ptr<Library>>> loaded;
  Hasher request;
  request.add(req.name).add(req.source).add(cc.path).add(cc.arch);
  for (const auto& f : req.flags) request.add(f);
  for (const auto& d : req.include_dirs) request.add(d);
  std::lock_guard<std::mutex> g(mu);
  auto& [r, lib] = loaded[request.hex()];
  if (lib) {
    if (result) *result = r;
    return lib;
  }
  r = build(req, cc);
  if (result) *result = r;
  try {
    lib = std::make_shared<Library>(r.path);
  } catch (const core::Error&) {  // checksum fine but not loadable (e.g. truncated by a crash): rebuild once
    log("entry " + r.path + " does not load: rebuilding");
    discard(fs::path(r.path).parent_path(), fs::path(cache_dir()) / "tmp");
    r = build(req, cc);
    if (result) *result = r;
    lib = std::make_shared<Library>(r.path);
  }
  return lib;
}

}  // namespace deepgemm_ascend::jit
