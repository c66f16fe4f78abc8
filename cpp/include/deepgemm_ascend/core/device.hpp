// Where a tensor lives.
#pragma once

#include <string>

namespace deepgemm_ascend::core {

enum class DeviceKind : uint8_t { kHost, kNpu };

struct Device {
  DeviceKind kind = DeviceKind::kHost;
  int index = 0;

  friend bool operator==(const Device&, const Device&) = default;
  std::string str() const {
    return kind == DeviceKind::kHost ? std::string("cpu") : "npu:" + std::to_string(index);
  }
};

}  // namespace deepgemm_ascend::core
