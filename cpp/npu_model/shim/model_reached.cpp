// Which modelled instructions a process reached (model_core.hpp, guard): with DGA_NPU_MODEL_REACHED naming a
// file, their names are appended to it, one a line, when the process ends. scripts/npu_run.py reads it to say
// which instructions an AscendC program (a CATLASS example) ran on the model. Plain C++ (no devkit headers).
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <string>

#include "model_core.hpp"

namespace dga_model {

namespace {
struct Reached {
  std::mutex lock;
  std::set<std::string> names;
  ~Reached() {
    const char* path = std::getenv("DGA_NPU_MODEL_REACHED");
    if (path == nullptr || *path == '\0') return;
    std::ofstream out(path, std::ios::app);
    for (const std::string& n : names) out << n << '\n';
  }
};
Reached& reached_set() {
  static Reached r;
  return r;
}
}  // namespace

void reached(const char* instr) {
  Reached& r = reached_set();
  const std::lock_guard<std::mutex> hold(r.lock);
  r.names.insert(instr);
}

}  // namespace dga_model
