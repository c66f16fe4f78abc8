// The kernel launches of a program npu_run.py built for the instruction model: every core of the launch on
// the model (dga_model::run_cores, the same runner the npu-model backend uses), under the model's checks.
// A model error (an instruction outside its documented range, an unmodelled instruction, a hazard, a flag
// left set) ends the program with a non-zero status and the error, since the program cannot go on with a
// result the launch did not produce.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "model_runner.hpp"

namespace dga_run {

void launch_kernel(const char* name, unsigned blocks, int cores, const std::function<void()>& body) {
  const dga_model::Cores kind = cores == 0 ? dga_model::Cores::kCube
                                : cores == 1 ? dga_model::Cores::kMix
                                             : dga_model::Cores::kVector;
  try {
    dga_model::run_cores(name, blocks, kind, [&](int) { body(); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npu_run: launch of %s on %u cores failed on the instruction model: %s\n", name, blocks,
                 e.what());
    std::exit(3);
  }
  std::fprintf(stderr, "npu_run: %s ran on %u cores of the instruction model\n", name, blocks);
}

}  // namespace dga_run
