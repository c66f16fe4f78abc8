#include "deepgemm_ascend/tile/l0b_views.hpp"

#include <cstring>

namespace deepgemm_ascend::tile {

void L0BView::copy_into_tile() const {
  auto* out = reinterpret_cast<uint16_t*>(tile);
  for (int64_t p = 0; p < panels; ++p) std::memcpy(out + p * run, data + p * panel, size_t(run) * sizeof(uint16_t));
}

void L0BViews::set(const L0BView& v) {
  L0BView* slot = nullptr;
  for (L0BView& s : slots_)
    if (s.tile == v.tile || (s.tile == nullptr && slot == nullptr)) slot = &s;
  if (slot == nullptr) {  // full: the first view becomes a copy
    slots_[0].copy_into_tile();
    slot = &slots_[0];
  }
  *slot = v;
}

const L0BView* L0BViews::find(const std::byte* tile) const {
  for (const L0BView& s : slots_)
    if (s.tile != nullptr && s.tile == tile) return &s;
  return nullptr;
}

void L0BViews::drop(const std::byte* tile) {
  for (L0BView& s : slots_)
    if (s.tile == tile) s = {};
}

void L0BViews::before_write(const std::byte* begin, const std::byte* end) {
  for (L0BView& s : slots_) {
    if (s.tile == nullptr) continue;
    const auto* first = reinterpret_cast<const std::byte*>(s.data);
    const auto* last = reinterpret_cast<const std::byte*>(s.data + (s.panels - 1) * s.panel + s.run);
    if (first < end && begin < last) {
      s.copy_into_tile();
      s = {};
    }
  }
}

}  // namespace deepgemm_ascend::tile
