#include "deepgemm_ascend/npu_model/events.hpp"

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

void EventModel::fail(const std::string& what, const std::string& src, const std::string& dst, int id) const {
  core::fail(core::ErrorKind::kRuntime, "event", "kernel ", kernel_, ", ", core_, ": ", what, " (", src, " -> ",
             dst, ", event id ", id, ")");
}

void EventModel::set_flag(const std::string& src, const std::string& dst, int id) {
  bool& s = set_[{src, dst, id}];
  if (s) fail("event id set twice before its wait", src, dst, id);
  s = true;
}

void EventModel::wait_flag(const std::string& src, const std::string& dst, int id) {
  auto it = set_.find({src, dst, id});
  if (it == set_.end() || !it->second) fail("wait with no set: it can never be satisfied", src, dst, id);
  it->second = false;
}

void EventModel::finish() const {
  for (const auto& [key, s] : set_)
    if (s) fail("flag still set when the kernel returns", std::get<0>(key), std::get<1>(key), std::get<2>(key));
}

}  // namespace deepgemm_ascend::npu_model
