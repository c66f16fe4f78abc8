// The host model of one AI Core: its on-chip buffers, its event flags and, in checked mode, the
// bookkeeping that turns what the NPU would silently get wrong into errors naming kernel, block and
// stage: buffer overflow, misaligned tile addresses, waits with no matching set, double sets, flags
// left set at kernel end, and stage buffers touched by a pipe that does not own them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "deepgemm_ascend/host/buffer_spec.hpp"
#include "deepgemm_ascend/host/l0_views.hpp"
#include "deepgemm_ascend/host/local_tile.hpp"

namespace deepgemm_ascend::tile::host {

// Host memory at an address of the launch parameters (kernel/launch_abi.hpp: plain integers).
template <class T>
T* at_address(uint64_t addr) {
  return reinterpret_cast<T*>(uintptr_t(addr));
}

class Core {
 public:
  explicit Core(const BufferSpec& spec);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  const BufferSpec& spec() const { return spec_; }

  // Kernel bracket, called by the launcher around each block.
  void begin_kernel(const char* kernel, int block_idx, int block_num, bool checked);
  void end_kernel();  // checked: throws if flags are left set or a deferred violation was recorded

  int block_idx() const { return block_idx_; }
  int block_num() const { return block_num_; }
  bool checked() const { return checked_; }
  const char* kernel() const { return kernel_; }

  // Bump allocation inside one buffer; the start is aligned to the buffer's rule. Overflowing the
  // buffer is always an error (it would corrupt memory here and other data on the NPU).
  LocalTile alloc(Pos pos, uint32_t bytes, const char* what);
  uint32_t used(Pos pos) const { return top_[int(pos)]; }

  // Allocation marks: a kernel running several stages (e.g. two GEMMs) frees one stage's buffers
  // before the next allocates its own (the NPU's TPipe reset).
  struct Marks {
    uint32_t top[kNumPos];
  };
  Marks mark() const;
  void release_to(const Marks& m);

  // Event ids, handed out centrally per (src, dst) event type.
  int alloc_event_id(Pipe src, Pipe dst, const char* what);
  void free_event_id(Pipe src, Pipe dst, int id);
  void set_flag(Pipe src, Pipe dst, int id);
  void wait_flag(Pipe src, Pipe dst, int id);
  bool flag_is_set(Pipe src, Pipe dst, int id) const { return flags_[int(src)][int(dst)][id] != 0; }

  // Checked mode: `pipe` is about to read or write `t` in position `pos`.
  void check_access(const LocalTile& t, Pos pos, Pipe pipe, const char* op) const;
  // Checked mode: `bytes` starting at t.addr must stay inside the tile and its buffer.
  void check_extent(const LocalTile& t, uint64_t bytes, const char* op) const;

  // Host-side scratch of at least n floats (e.g. the gathered scales of a promoted K block); valid until
  // the next call.
  float* scratch(size_t n) {
    if (scratch_.size() < n) scratch_.resize(n);
    return scratch_.data();
  }

  // bf16 L0 tiles left in L1 by the L1 -> L0 loads (unchecked runs; host/l0_views.hpp).
  L0Views& l0_views() { return l0_views_; }

  [[noreturn]] void violation(const std::string& what) const;
  void defer_violation(const std::string& what);  // for destructors, reported by end_kernel

 private:
  uint32_t offset_of(const LocalTile& t) const;

  BufferSpec spec_;
  std::unique_ptr<std::byte[]> storage_[kNumPos];
  uint32_t top_[kNumPos] = {};
  uint8_t flags_[kNumPipes][kNumPipes][32] = {};
  uint32_t id_used_[kNumPipes][kNumPipes] = {};  // bit mask of handed-out ids
  const char* kernel_ = "";
  int block_idx_ = 0;
  int block_num_ = 1;
  bool checked_ = false;
  std::string deferred_;
  std::vector<float> scratch_;
  L0Views l0_views_;
};

// Buffers allocated in a scope are released at its end (their rings must be gone by then).
class BufferScope {
 public:
  explicit BufferScope(Core& core) : core_(core), marks_(core.mark()) {}
  ~BufferScope() { core_.release_to(marks_); }
  BufferScope(const BufferScope&) = delete;
  BufferScope& operator=(const BufferScope&) = delete;

 private:
  Core& core_;
  Core::Marks marks_;
};

}  // namespace deepgemm_ascend::tile::host
