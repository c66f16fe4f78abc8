// Backends launch kernels on a device. Blocks of a launch are spread over the device's AI cores.
#pragma once

#include <functional>
#include <memory>

#include "deepgemm_ascend/core/device.hpp"
#include "deepgemm_ascend/runtime/stream.hpp"
#include "deepgemm_ascend/host/core.hpp"

namespace deepgemm_ascend::runtime {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual core::DeviceKind kind() const = 0;
  virtual int max_ai_cores() const = 0;
  virtual int num_ai_cores() const = 0;
  virtual void set_num_ai_cores(int n) = 0;  // 0 = all
  virtual Stream& default_stream() = 0;
  virtual std::unique_ptr<Stream> create_stream(bool async) = 0;
};

using BlockFn = std::function<void(tile::host::Core&)>;

// Host backend: worker threads, each one AI core with its own tile::host::Core. The calling thread takes part as
// core 0. The workers are the process's OpenMP threads when the library is built with OpenMP (torch's, in a
// Python process), else (and inside a parallel region) a pool of the library's own. Concurrent launches
// from several threads are serialised.
class HostBackend final : public Backend {
 public:
  HostBackend();
  ~HostBackend() override;
  const char* name() const override { return "host"; }
  core::DeviceKind kind() const override { return core::DeviceKind::kHost; }
  int max_ai_cores() const override;
  int num_ai_cores() const override;
  void set_num_ai_cores(int n) override;
  Stream& default_stream() override;
  std::unique_ptr<Stream> create_stream(bool async) override;

  // Runs fn once per block (block_idx in [0, block_dim)) on min(block_dim, num_ai_cores()) cores,
  // through `stream` (default: the synchronous default stream). The first exception is rethrown.
  void launch(const char* kernel, int block_dim, const BlockFn& fn, Stream* stream = nullptr);

  // True when launches run on the process's OpenMP threads (DGA_HOST_OPENMP builds).
  static bool uses_openmp();

 private:
  struct Pool;
  void run_blocks(const char* kernel, int block_dim, const BlockFn& fn);
  std::unique_ptr<Pool> pool_;
};

HostBackend& host_backend();

}  // namespace deepgemm_ascend::runtime
