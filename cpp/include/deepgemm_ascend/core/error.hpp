// Errors raised by the library. The Python layer maps each kind onto TypeError / ValueError /
// RuntimeError / NotImplementedError; the message always names the offending argument.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace deepgemm_ascend::core {

enum class ErrorKind { kType, kValue, kRuntime, kNotImplemented };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string arg, const std::string& message)
      : std::runtime_error(message), kind_(kind), arg_(std::move(arg)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& arg() const { return arg_; }

 private:
  ErrorKind kind_;
  std::string arg_;
};

template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// Throws an Error whose message starts with "<arg>: ".
template <class... Parts>
[[noreturn]] void fail(ErrorKind kind, const std::string& arg, const Parts&... parts) {
  throw Error(kind, arg, arg.empty() ? concat(parts...) : concat(arg, ": ", parts...));
}

}  // namespace deepgemm_ascend::core

#define DGA_REQUIRE(cond, kind, arg, ...)                                                 \
  do {                                                                                     \
    if (!(cond)) ::deepgemm_ascend::core::fail(::deepgemm_ascend::core::ErrorKind::kind, \
                                               arg, __VA_ARGS__);                          \
  } while (0)
