#include "deepgemm_ascend/host/l0_views.hpp"

#include <cstring>

namespace deepgemm_ascend::tile::host {

void L0View::copy_into_tile() const {
  auto* out = reinterpret_cast<uint16_t*>(tile);
  for (int64_t p = 0; p < panels; ++p) std::memcpy(out + p * run, data + p * panel, size_t(run) * sizeof(uint16_t));
}

void L0Views::set(const L0View& v) {
  L0View* slot = nullptr;
  for (L0View& s : slots_)
    if (s.tile == v.tile || (s.tile == nullptr && slot == nullptr)) slot = &s;
  if (slot == nullptr) {  // full: the first view becomes a copy
    slots_[0].copy_into_tile();
    slot = &slots_[0];
  }
  *slot = v;
}

const L0View* L0Views::find(const std::byte* tile) const {
  for (const L0View& s : slots_)
    if (s.tile != nullptr && s.tile == tile) return &s;
  return nullptr;
}

void L0Views::drop(const std::byte* tile) {
  for (L0View& s : slots_)
    if (s.tile == tile) s = {};
}

void L0Views::before_write(const std::byte* begin, const std::byte* end) {
  for (L0View& s : slots_) {
    if (s.tile == nullptr) continue;
    const auto* first = reinterpret_cast<const std::byte*>(s.data);
    const auto* last = reinterpret_cast<const std::byte*>(s.data + (s.panels - 1) * s.panel + s.run);
    if (first < end && begin < last) {
      s.copy_into_tile();
      s = {};
    }
  }
}

}  // namespace deepgemm_ascend::tile::host
