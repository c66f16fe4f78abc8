// A stream runs submitted work in submission order. A synchronous stream runs each task inside
// submit(); an asynchronous one hands tasks to its own thread and reports the first failure at
// synchronize().
#pragma once

#include <functional>
#include <memory>

namespace deepgemm_ascend::runtime {

class Stream {
 public:
  virtual ~Stream() = default;
  virtual void submit(std::function<void()> task) = 0;
  virtual void synchronize() = 0;
  virtual bool is_async() const = 0;
};

std::unique_ptr<Stream> make_host_stream(bool async);

}  // namespace deepgemm_ascend::runtime
