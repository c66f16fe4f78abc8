// Cross-core barrier of one persistent launch (the NPU's SyncAll over all blocks of a kernel). Every
// block of the launch must be resident, i.e. block_dim <= cores. A block that fails calls fail(): the
// others leave their wait with an error instead of waiting forever, and the launcher rethrows the
// first failure.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>

namespace deepgemm_ascend::tile::host {

class GridSync {
 public:
  explicit GridSync(int blocks) : blocks_(blocks) {}

  void sync();                                  // all blocks arrive, then all leave
  void fail(std::exception_ptr e) noexcept;     // releases waiting blocks; keeps the first error
  void rethrow_if_failed();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int blocks_, arrived_ = 0;
  uint64_t generation_ = 0;
  std::exception_ptr error_;
};

}  // namespace deepgemm_ascend::tile::host
