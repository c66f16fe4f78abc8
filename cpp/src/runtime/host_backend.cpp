#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"

namespace deepgemm_ascend::runtime {

// Worker w (0 = the launching thread) runs blocks w, w + n, w + 2n, ... of the current launch.
//
// The workers are the process's OpenMP threads when the library is built with OpenMP: in a Python process
// that is the runtime torch loaded (same soname), so the threads that keep spinning after a torch op are the
// ones that run our blocks, instead of stealing the cores from a second pool. A launch from inside a
// parallel region, or one that gets a smaller team than it asked for (OMP_THREAD_LIMIT, OMP_DYNAMIC), runs
// on the library's own threads: a kernel with grid-wide syncs needs all its cores at once.
struct HostBackend::Pool {
  explicit Pool(int n) : max_cores(n), cores(size_t(n)) {
    for (int w = 1; w < n; ++w) threads.emplace_back([this, w] { worker(w); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(mu);
      stop = true;
    }
    start_cv.notify_all();
    for (auto& t : threads) t.join();
  }

  tile::host::Core& core(int w) {
    if (!cores[size_t(w)]) cores[size_t(w)] = std::make_unique<tile::host::Core>(host_buffer_spec());
    return *cores[size_t(w)];
  }

  void run_share(int w) {
    try {
      tile::host::Core& c = core(w);
      for (int b = w; b < block_dim && !failed.load(std::memory_order_relaxed); b += active) {
        c.begin_kernel(kernel, b, block_dim, checked);
        (*fn)(c);
        c.end_kernel();
      }
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  }

  void worker(int w) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu);
        start_cv.wait(l, [&] { return stop || (generation != seen && w < active); });
        if (stop) return;
        seen = generation;
      }
      run_share(w);
      std::lock_guard<std::mutex> g(mu);
      if (--pending == 0) done_cv.notify_all();
    }
  }

  void launch(const char* k, int dim, const BlockFn& f, int cores_to_use) {
    std::lock_guard<std::mutex> serial(launch_mu);
    {
      std::lock_guard<std::mutex> g(mu);
      kernel = k;
      block_dim = dim;
      fn = &f;
      checked = checked_mode();
      active = std::max(1, std::min(dim, cores_to_use));
      pending = active - 1;
      failed = false;
      error = nullptr;
    }
    if (run_on_openmp()) {
      fn = nullptr;
      if (error) std::rethrow_exception(std::exchange(error, nullptr));
      return;
    }
    {
      std::lock_guard<std::mutex> g(mu);
      ++generation;
    }
    start_cv.notify_all();
    run_share(0);
    std::unique_lock<std::mutex> l(mu);
    done_cv.wait(l, [&] { return pending == 0; });
    fn = nullptr;
    if (error) std::rethrow_exception(std::exchange(error, nullptr));
  }

  // True when the launch ran on an OpenMP team of exactly `active` threads.
  bool run_on_openmp() {
#if defined(_OPENMP)
    if (active == 1) {
      run_share(0);
      return true;
    }
    if (omp_in_parallel()) return false;
    bool full = true;
#pragma omp parallel num_threads(active)
    {
      if (omp_get_num_threads() != active) {
#pragma omp single
        full = false;
      } else {
        run_share(omp_get_thread_num());
      }
    }
    return full;
#else
    return false;
#endif
  }

  const int max_cores;
  std::vector<std::unique_ptr<tile::host::Core>> cores;
  std::vector<std::thread> threads;
  std::mutex launch_mu, mu;
  std::condition_variable start_cv, done_cv;
  uint64_t generation = 0;
  const char* kernel = "";
  int block_dim = 0, active = 0, pending = 0;
  const BlockFn* fn = nullptr;
  bool checked = false, stop = false;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::atomic<int> requested{0};  // 0 = all cores
  std::unique_ptr<Stream> default_stream = make_host_stream(false);
};

HostBackend::HostBackend()
    : pool_(std::make_unique<Pool>(int(std::max(1u, std::thread::hardware_concurrency())))) {}
HostBackend::~HostBackend() = default;

int HostBackend::max_ai_cores() const { return pool_->max_cores; }
int HostBackend::num_ai_cores() const {
  const int r = pool_->requested.load();
  return r == 0 ? pool_->max_cores : r;
}
void HostBackend::set_num_ai_cores(int n) {
  DGA_REQUIRE(n >= 0 && n <= pool_->max_cores, kValue, "num_ai_cores", "must be in [0, ", pool_->max_cores,
              "] (0 = all cores of the host), got ", n);
  pool_->requested.store(n);
}

bool HostBackend::uses_openmp() {
#if defined(_OPENMP)
  return true;
#else
  return false;
#endif
}

Stream& HostBackend::default_stream() { return *pool_->default_stream; }
std::unique_ptr<Stream> HostBackend::create_stream(bool async) { return make_host_stream(async); }

void HostBackend::run_blocks(const char* kernel, int block_dim, const BlockFn& fn) {
  pool_->launch(kernel, block_dim, fn, num_ai_cores());
}

void HostBackend::launch(const char* kernel, int block_dim, const BlockFn& fn, Stream* stream) {
  DGA_REQUIRE(block_dim >= 1 && block_dim <= arch::Host::kMaxBlockDim, kValue, "block_dim", "must be in [1, ",
              arch::Host::kMaxBlockDim, "], got ", block_dim);
  Stream& s = stream ? *stream : default_stream();
  if (!s.is_async()) {
    run_blocks(kernel, block_dim, fn);
    return;
  }
  s.submit([this, kernel, block_dim, fn] { run_blocks(kernel, block_dim, fn); });
}

HostBackend& host_backend() {
  static HostBackend b;
  return b;
}

}  // namespace deepgemm_ascend::runtime
