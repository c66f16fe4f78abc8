// The NPU instruction model, synchronisation: SetFlag / WaitFlag between the pipes of one core
// and the cross-core flags of a group, with the checks of the AscendC documentation ("SetFlag/WaitFlag":
// an event id set twice before its wait is undefined behaviour; a wait needs a set; the kernel returns
// with every flag waited). Errors name the kernel, core, pipes and id. The model runs a core's
// instructions in program order, so a wait whose set has not been issued yet can never be satisfied.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace deepgemm_ascend::npu_model {

class EventModel {
 public:
  // core: the core's name in errors ("core 3", "group 0 AIV1").
  EventModel(std::string kernel, std::string core) : kernel_(std::move(kernel)), core_(std::move(core)) {}

  // Pipes by name as the documentation writes them (MTE1, MTE2, M, FIX, V, MTE3, S).
  void set_flag(const std::string& src, const std::string& dst, int id);
  void wait_flag(const std::string& src, const std::string& dst, int id);
  // At the kernel's end: every flag set has been waited.
  void finish() const;

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& src, const std::string& dst, int id) const;

  std::string kernel_;
  std::string core_;
  std::map<std::tuple<std::string, std::string, int>, bool> set_;
};

}  // namespace deepgemm_ascend::npu_model
