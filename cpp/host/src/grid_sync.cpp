#include "deepgemm_ascend/host/grid_sync.hpp"

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::tile::host {

namespace {
[[noreturn]] void peer_block_failed() {
  core::fail(core::ErrorKind::kRuntime, "", "tile machine: another block of this launch failed");
}
}  // namespace

void GridSync::sync() {
  std::unique_lock<std::mutex> l(mu_);
  if (error_) peer_block_failed();
  const uint64_t gen = generation_;
  if (++arrived_ == blocks_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(l, [&] { return generation_ != gen || error_; });
  if (generation_ == gen) peer_block_failed();
}

void GridSync::fail(std::exception_ptr e) noexcept {
  std::lock_guard<std::mutex> g(mu_);
  if (!error_) error_ = e;
  cv_.notify_all();
}

void GridSync::rethrow_if_failed() {
  std::lock_guard<std::mutex> g(mu_);
  if (error_) std::rethrow_exception(error_);
}

}  // namespace deepgemm_ascend::tile::host
