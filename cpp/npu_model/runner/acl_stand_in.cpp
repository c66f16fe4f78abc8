// The ACL runtime calls of acl/acl.h on the host, for a program running on the instruction model: device
// memory is host memory (4 KB aligned, as the devkit's GmAlloc), copies are memcpy in either direction, a
// stream orders nothing because every launch runs to its end when called (launch.cpp). Calls check what
// they can (null pointers, a copy larger than its destination) and return ACL's error codes for them.
#include <cstdlib>
#include <cstring>

#include "acl/acl.h"

namespace {
constexpr size_t kAlign = 4096;
int g_stream_tag = 0;  // streams are distinct non-null handles
}  // namespace

extern "C" {
aclError aclInit(const char*) { return ACL_SUCCESS; }
aclError aclFinalize() { return ACL_SUCCESS; }
aclError aclrtSetDevice(int32_t device_id) { return device_id == 0 ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM; }
aclError aclrtResetDevice(int32_t) { return ACL_SUCCESS; }
aclError aclrtGetDeviceCount(uint32_t* count) {
  if (count == nullptr) return ACL_ERROR_INVALID_PARAM;
  *count = 1;
  return ACL_SUCCESS;
}
aclError aclrtCreateStream(aclrtStream* stream) {
  if (stream == nullptr) return ACL_ERROR_INVALID_PARAM;
  *stream = &g_stream_tag;
  return ACL_SUCCESS;
}
aclError aclrtDestroyStream(aclrtStream) { return ACL_SUCCESS; }
aclError aclrtSynchronizeStream(aclrtStream) { return ACL_SUCCESS; }
aclError aclrtSynchronizeDevice() { return ACL_SUCCESS; }

aclError aclrtMalloc(void** dev_ptr, size_t size, aclrtMemMallocPolicy) {
  if (dev_ptr == nullptr || size == 0) return ACL_ERROR_INVALID_PARAM;
  *dev_ptr = std::aligned_alloc(kAlign, (size + kAlign - 1) / kAlign * kAlign);
  return *dev_ptr != nullptr ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
aclError aclrtFree(void* dev_ptr) {
  std::free(dev_ptr);
  return ACL_SUCCESS;
}
aclError aclrtMallocHost(void** host_ptr, size_t size) { return aclrtMalloc(host_ptr, size, ACL_MEM_MALLOC_HUGE_FIRST); }
aclError aclrtFreeHost(void* host_ptr) { return aclrtFree(host_ptr); }

aclError aclrtMemset(void* dev_ptr, size_t max_count, int32_t value, size_t count) {
  if (dev_ptr == nullptr || count > max_count) return ACL_ERROR_INVALID_PARAM;
  std::memset(dev_ptr, value, count);
  return ACL_SUCCESS;
}
aclError aclrtMemcpy(void* dst, size_t dest_max, const void* src, size_t count, aclrtMemcpyKind) {
  if ((dst == nullptr || src == nullptr) && count > 0) return ACL_ERROR_INVALID_PARAM;
  if (count > dest_max) return ACL_ERROR_INVALID_PARAM;
  if (count > 0) std::memmove(dst, src, count);
  return ACL_SUCCESS;
}
aclError aclrtMemcpyAsync(void* dst, size_t dest_max, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream) {
  return aclrtMemcpy(dst, dest_max, src, count, kind);
}
}
