// The NPU instruction model, the checker of memory accesses. Each instruction runs on a pipe
// (MTE2 GM->L1, MTE1 L1->L0A/L0B, M the cube, FIX L0C out, V the vector unit, MTE3 UB->GM); the pipes of a
// core run in parallel, each in program order, and are ordered only by SetFlag/WaitFlag and PipeBarrier
// (the AscendC documentation, "SetFlag/WaitFlag", "PipeBarrier"). The checker keeps, per 32 B of every
// buffer position, the last writer and readers, and per pipe what it is ordered after (a WaitFlag orders
// the waiting pipe after everything the setting pipe had issued, and after what that pipe was ordered
// after, when it set the flag). It reports
//   * a run outside the buffer position that holds its start (L1, L0A, L0B, L0C, UB, L0A_MX, L0B_MX with
//     the 950's capacities), and
//   * a read after another pipe's write, or a write after another pipe's read or write, with no flag or
//     barrier between them (the hardware may run them in either order),
//   * an operand start that breaks its instruction's documented start-address rule (StartRule: the buffer
//     position it must lie in and the alignment of its offset there), raised as a ValueError naming the
//     operand, with the rule's page,
//   * with GM regions set for the launch (set_gm_regions: the tensors a launch may touch, as its caller
//     knows them), a DMA's GM run that does not lie inside one region (an out-of-bounds address computed
//     from device-resident sizes or ids, say),
// naming kernel, core, instruction, pipes and bytes. GM runs are not checked for order: the model runs a
// core's instructions in program order, and GM ordering across cores is the kernels' own. Scalar reads of
// GM (GlobalTensor::GetValue) are plain loads of the CPU-debug build and are not checked.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

// Pipes as the devkit's pipe_t numbers them (PIPE_S 0 ... PIPE_FIX 10), and on a vector core the group's
// cube Fixpipe writing into its UB (kPipeAicFix).
inline constexpr int kPipes = 12;
inline constexpr int kPipeS = 0, kPipeV = 1, kPipeM = 2, kPipeMte1 = 3, kPipeMte2 = 4, kPipeMte3 = 5, kPipeFix = 10;
inline constexpr int kPipeAll = 6;
inline constexpr int kPipeAicFix = 11;
const char* pipe_name(int pipe);

struct BufferPos {
  std::string name;
  const uint8_t* base = nullptr;
  size_t bytes = 0;
};

// The GM regions of the launch that runs now (every core's checker reads them); empty: GM is not checked.
void set_gm_regions(std::vector<BufferPos> regions);

class Hazards {
 public:
  // core: the core's name in errors ("core 3", "group 0 AIV1").
  Hazards(std::string kernel, std::string core, std::vector<BufferPos> buffers);

  // Checks and records the runs of one instruction on `pipe`.
  void instruction(int pipe, const char* name, const Accesses& runs);
  void set_flag(int src, int dst, int id);
  void wait_flag(int src, int dst, int id);
  // PipeBarrier<PIPE_ALL> orders every pipe after every other; a barrier on one pipe orders nothing across.
  void barrier(int pipe);

  using Clock = std::array<uint32_t, kPipes>;  // per pipe: the last instruction ordered before
  // Cross-core order: what pipe `pipe` has issued and is ordered after (for a flag another core waits),
  // and ordering pipe `pipe` (-1: every pipe) after a clock.
  Clock clock_of(int pipe) const;
  void order_after(int pipe, const Clock& c);

 private:
  struct Granule {
    int8_t writer = -1;
    uint32_t write_seq = 0;
    Clock read_seq{};
  };
  struct Shadow {
    const BufferPos* buf;
    std::vector<Granule> granules;
  };

  Shadow* find(const uint8_t* p);
  const Shadow* find(const uint8_t* p) const;
  void check_gm(int pipe, const char* name, const Run& r) const;
  void check_start(const char* name, const Run& r) const;
  void check(int pipe, const char* name, const Run& r, Shadow& s);
  [[noreturn]] void fail(const char* name, int pipe, const std::string& what) const;

  std::string kernel_;
  std::string core_;
  std::vector<BufferPos> buffers_;
  std::vector<Shadow> shadows_;
  Clock issued_{};                      // instructions issued per pipe
  std::array<Clock, kPipes> ordered_{};  // ordered_[q][p]: pipe q is ordered after p's first ordered_[q][p]
  std::map<std::tuple<int, int, int>, Clock> flags_;  // the setter's clock at the set
};

}  // namespace deepgemm_ascend::npu_model
