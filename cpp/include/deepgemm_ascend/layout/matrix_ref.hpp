// A strided 2-D matrix of raw codes in memory (8, 16 or 32-bit values, or packed 4-bit values).
// Strides and the origin count values; for 4-bit values they count nibbles (value i lives in byte
// i / 2, low nibble first), so K-major and MN-major packed FP4 are both expressible.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace deepgemm_ascend::layout {

namespace detail {

inline uint32_t load_code(const uint8_t* p, int64_t i, int bits) {
  switch (bits) {
    case 4: return (p[i >> 1] >> ((i & 1) * 4)) & 0xFu;
    case 8: return p[i];
    case 16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    default: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
  }
}

inline void store_code(uint8_t* p, int64_t i, int bits, uint32_t v) {
  switch (bits) {
    case 4: {
      const int sh = int(i & 1) * 4;
      p[i >> 1] = uint8_t((p[i >> 1] & ~(0xFu << sh)) | ((v & 0xFu) << sh));
      break;
    }
    case 8: p[i] = uint8_t(v); break;
    case 16: { uint16_t h = uint16_t(v); std::memcpy(p + 2 * i, &h, 2); break; }
    default: std::memcpy(p + 4 * i, &v, 4); break;
  }
}

}  // namespace detail

template <class Byte>
struct BasicMatrixRef {
  Byte* base = nullptr;
  int64_t origin = 0;  // value index of element (0, 0)
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
  int bits = 16;
  // Optional gather by index: logical row r (gather_dim 0) or column c (gather_dim 1) lies at storage
  // index gather[r] (or gather[c]) of that dimension; a negative entry is a row (column) of zeros, which
  // index() does not address (gathered() tells). Set only for the legacy fused GEMMs.
  const int32_t* gather = nullptr;
  int gather_dim = 0;

  // Whether (r, c) is in a gathered row or column of zeros.
  bool zero(int64_t r, int64_t c) const { return gather != nullptr && gather[gather_dim == 0 ? r : c] < 0; }
  int64_t index(int64_t r, int64_t c) const {
    if (gather != nullptr) (gather_dim == 0 ? r : c) = gather[gather_dim == 0 ? r : c];
    return origin + r * row_stride + c * col_stride;
  }
  uint32_t get(int64_t r, int64_t c) const { return zero(r, c) ? 0u : detail::load_code(bytes(), index(r, c), bits); }
  void set(int64_t r, int64_t c, uint32_t v) const { detail::store_code(bytes(), index(r, c), bits, v); }

  // Typed pointer to element (r, c); only for whole-byte values, not in a row or column of zeros.
  template <class T>
  T* at(int64_t r, int64_t c) const { return reinterpret_cast<T*>(bytes() + index(r, c) * (bits / 8)); }

  BasicMatrixRef transposed() const {
    return {.base = base, .origin = origin, .rows = cols, .cols = rows, .row_stride = col_stride,
            .col_stride = row_stride, .bits = bits, .gather = gather, .gather_dim = 1 - gather_dim};
  }
  BasicMatrixRef block(int64_t r0, int64_t c0, int64_t nr, int64_t nc) const {
    if (gather == nullptr) return {.base = base, .origin = index(r0, c0), .rows = nr, .cols = nc,
                                   .row_stride = row_stride, .col_stride = col_stride, .bits = bits};
    // The gathered dimension keeps its origin and moves its table; the other one moves the origin.
    if (gather_dim == 0)
      return {.base = base, .origin = origin + c0 * col_stride, .rows = nr, .cols = nc, .row_stride = row_stride,
              .col_stride = col_stride, .bits = bits, .gather = gather + r0, .gather_dim = 0};
    return {.base = base, .origin = origin + r0 * row_stride, .rows = nr, .cols = nc, .row_stride = row_stride,
            .col_stride = col_stride, .bits = bits, .gather = gather + c0, .gather_dim = 1};
  }

 private:
  auto* bytes() const {
    if constexpr (std::is_const_v<Byte>) return reinterpret_cast<const uint8_t*>(base);
    else return reinterpret_cast<uint8_t*>(base);
  }
};

using MatrixRef = BasicMatrixRef<const void>;
using MutMatrixRef = BasicMatrixRef<void>;

}  // namespace deepgemm_ascend::layout
