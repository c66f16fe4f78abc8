#include "deepgemm_ascend/runtime/stream.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace deepgemm_ascend::runtime {

namespace {

class SyncStream final : public Stream {
 public:
  void submit(std::function<void()> task) override { task(); }
  void synchronize() override {}
  bool is_async() const override { return false; }
};

class AsyncStream final : public Stream {
 public:
  AsyncStream() : worker_([this] { loop(); }) {}
  ~AsyncStream() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  void submit(std::function<void()> task) override {
    {
      std::lock_guard<std::mutex> g(mu_);
      queue_.push_back(std::move(task));
    }
    cv_.notify_all();
  }
  void synchronize() override {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait(l, [&] { return queue_.empty() && !busy_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  bool is_async() const override { return true; }

 private:
  void loop() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto task = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      l.unlock();
      std::exception_ptr err;
      // Work after a failure still runs in order; the first failure is reported at synchronize().
      try {
        task();
      } catch (...) {
        err = std::current_exception();
      }
      l.lock();
      if (err && !error_) error_ = err;
      busy_ = false;
      idle_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<std::function<void()>> queue_;
  bool busy_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<Stream> make_host_stream(bool async) {
  if (async) return std::make_unique<AsyncStream>();
  return std::make_unique<SyncStream>();
}

}  // namespace deepgemm_ascend::runtime
