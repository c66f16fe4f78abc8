// The ACL runtime calls of an AscendC host program, for running it on the instruction model (npu_run.py): the
// declarations as CANN's acl/acl.h documents them (the error codes, memory policies and copy kinds that
// AscendC programs pass), implemented by acl_stand_in.cpp on host memory. Device memory is host memory, a
// stream is an ordered queue that runs every launch at once (the model runs a launch to its end), and the
// synchronising calls have nothing left to wait for. Also the launch dimensions the devkit's CPU-debug SIMT
// headers touch.
#pragma once

#include <cstddef>
#include <cstdint>

struct dim3 {
  uint32_t x = 1, y = 1, z = 1;
  constexpr dim3(uint32_t vx = 1, uint32_t vy = 1, uint32_t vz = 1) : x(vx), y(vy), z(vz) {}
};

typedef int aclError;
typedef void* aclrtStream;
typedef void* aclrtContext;

constexpr aclError ACL_SUCCESS = 0;
constexpr aclError ACL_ERROR_NONE = 0;
constexpr aclError ACL_ERROR_INVALID_PARAM = 100000;
constexpr aclError ACL_ERROR_BAD_ALLOC = 200000;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
  ACL_MEMCPY_DEFAULT,
} aclrtMemcpyKind;

extern "C" {
aclError aclInit(const char* config_path);
aclError aclFinalize();
aclError aclrtSetDevice(int32_t device_id);
aclError aclrtResetDevice(int32_t device_id);
aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeDevice();
aclError aclrtMalloc(void** dev_ptr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* dev_ptr);
aclError aclrtMallocHost(void** host_ptr, size_t size);
aclError aclrtFreeHost(void* host_ptr);
aclError aclrtMemset(void* dev_ptr, size_t max_count, int32_t value, size_t count);
aclError aclrtMemcpy(void* dst, size_t dest_max, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t dest_max, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream);
}
