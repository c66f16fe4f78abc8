#include "deepgemm_ascend/jit/compiler.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "deepgemm_ascend/core/error.hpp"

extern char** environ;

namespace deepgemm_ascend::jit {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string version_of(const std::string& path, const char* what) {
  std::string out;
  const int rc = run_command({path, "--version"}, out);
  DGA_REQUIRE(rc == 0, kRuntime, what, "cannot run '", path, " --version' (exit status ", rc, "): ", first_line(out));
  return first_line(out);
}

}  // namespace

std::vector<std::string> Compiler::command(const std::string& source, const std::string& output,
                                           const std::vector<std::string>& include_dirs,
                                           const std::vector<std::string>& extra_flags) const {
  std::vector<std::string> argv{path};
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const auto& d : include_dirs) argv.push_back("-I" + d);
  argv.insert(argv.end(), {source, "-o", output});
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());  // libraries after the source they serve
  return argv;
}

const Compiler& host_compiler() {
  static const Compiler c = [] {
    Compiler h;
    h.kind = "host";
    const std::string jit_cxx = env("DG_JIT_CXX"), cxx = env("CXX");
    h.path = !jit_cxx.empty() ? jit_cxx : !cxx.empty() ? cxx : "c++";
    h.version = version_of(h.path, jit_cxx.empty() ? (cxx.empty() ? "c++" : "CXX") : "DG_JIT_CXX");
    h.arch = "host";
    h.flags = {"-std=c++20", "-O2", "-fPIC", "-shared", "-DNDEBUG"};
    return h;
  }();
  return c;
}

Compiler bisheng_compiler(const std::string& arch) {
  Compiler b;
  b.kind = "bisheng";
  const std::string home = env("ASCEND_HOME_PATH");
  b.path = home.empty() ? "bisheng" : home + "/bin/bisheng";
  b.version = version_of(b.path, "ASCEND_HOME_PATH");
  b.arch = arch;
  // shared/reference/ascend950.md §1, §8: `bisheng -x asc ... -shared --npu-arch=dav-3510`.
  b.flags = {"-x", "asc", "-std=c++17", "-O2", "-fPIC", "-shared", "--npu-arch=" + arch};
  return b;
}

int run_command(const std::vector<std::string>& argv, std::string& output) {
  char path[] = "/tmp/dga_jit_outXXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = -1;
  if (err == 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(fd);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  output = ss.str();
  ::unlink(path);
  if (err != 0) {
    output = "cannot start '" + argv[0] + "': " + std::to_string(err);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace deepgemm_ascend::jit
