// securec.h of Huawei's bounds-checking C library (libboundscheck), which AscendC host programs include: the
// two calls such programs use, with the C11 Annex K contract (a destination of destMax bytes; a request that
// does not fit, overlapping areas or a null pointer fail without copying and returns non-zero), for running them on the
// instruction model (npu_run.py).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstring>

#ifndef EOK
#define EOK 0
#endif

using errno_t = int;

inline errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count) {
  if (dest == nullptr || src == nullptr) return EINVAL;
  if (count > destMax) return ERANGE;
  const auto* d = static_cast<const char*>(dest);
  const auto* s = static_cast<const char*>(src);
  if (d < s + count && s < d + count) return EINVAL;  // overlapping: the library refuses it too
  std::memcpy(dest, src, count);
  return EOK;
}

inline errno_t memset_s(void* dest, size_t destMax, int c, size_t count) {
  if (dest == nullptr) return EINVAL;
  if (count > destMax) return ERANGE;
  std::memset(dest, c, count);
  return EOK;
}
