#include "deepgemm_ascend/runtime/acl_backend.hpp"

#include "deepgemm_ascend/core/error.hpp"

#ifdef DGA_WITH_NPU
#include <dlfcn.h>

#include <map>
#include <mutex>
#include <utility>

#include "acl/acl.h"
#endif

namespace deepgemm_ascend::runtime {

namespace {
thread_local void* g_stream = nullptr;
}  // namespace

void set_current_npu_stream(void* stream) { g_stream = stream; }
void* current_npu_stream() { return g_stream; }

#ifndef DGA_WITH_NPU

bool npu_backend_built() { return false; }
int npu_device_count() { return 0; }
std::string npu_unavailable_reason() {
  return "this build has no NPU backend (CANN was not found at configure time: set ASCEND_HOME_PATH and "
         "rebuild with -DDGA_NPU=ON)";
}
void npu_launch(int, const char*, unsigned, void*, const void*) {
  core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason());
}
void npu_launch_entry(int, void*, const char*, unsigned, void*, const void*) {
  core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason());
}
void npu_copy_rows_async(int, void*, size_t, const void*, size_t, size_t, size_t, void*) {
  core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason());
}
int npu_cube_cores(int) { core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason()); }
std::string npu_kernels_arch() { core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason()); }
void* npu_workspace(int, void*, size_t) { core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason()); }
int npu_ipc_pid() { core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason()); }
std::string npu_ipc_export(int, void*, size_t, const std::vector<int>&) {
  core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason());
}
void* npu_ipc_import(int, const std::string&) { core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason()); }
void npu_ipc_close(const std::string&) { core::fail(core::ErrorKind::kRuntime, "device", npu_unavailable_reason()); }

#else

namespace {

std::string acl_message() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "(no message)";
}

void check(aclError e, const char* what) {
  DGA_REQUIRE(e == ACL_SUCCESS, kRuntime, "device", what, " failed with ACL error ", int(e), ": ", acl_message());
}

bool acl_ready() {
  static const bool ok = [] {
    const aclError e = aclInit(nullptr);
    return e == ACL_SUCCESS || e == ACL_ERROR_REPEAT_INITIALIZE;  // torch_npu may have initialised ACL
  }();
  return ok;
}

// The kernels library next to libdeepgemm_ascend (DGA_NPU_KERNELS_LIB, set by CMake).
void* kernels() {
  static void* handle = [] {
    Dl_info info{};
    ::dladdr(reinterpret_cast<void*>(&npu_backend_built), &info);
    std::string dir = info.dli_fname ? info.dli_fname : "";
    dir = dir.substr(0, dir.find_last_of('/') + 1);
    return ::dlopen((dir + DGA_NPU_KERNELS_LIB).c_str(), RTLD_NOW | RTLD_LOCAL);
  }();
  DGA_REQUIRE(handle != nullptr, kRuntime, "device", "cannot load ", DGA_NPU_KERNELS_LIB, ": ", ::dlerror());
  return handle;
}

}  // namespace

bool npu_backend_built() { return true; }

int npu_device_count() {
  if (!acl_ready()) return 0;
  uint32_t n = 0;
  return aclrtGetDeviceCount(&n) == ACL_SUCCESS ? int(n) : 0;
}

std::string npu_unavailable_reason() {
  if (!acl_ready()) return "aclInit failed: " + acl_message();
  return npu_device_count() > 0 ? "" : "ACL sees no NPU device";
}

std::string npu_kernels_arch() { return DGA_NPU_KERNELS_ARCH; }

int npu_cube_cores(int device) {
  int64_t v = 0;
  check(aclrtGetDeviceInfo(uint32_t(device), ACL_DEV_ATTR_AICORE_CORE_NUM, &v), "aclrtGetDeviceInfo");
  return int(v);
}

void npu_launch_entry(int device, void* entry, const char* name, unsigned block_dim, void* stream,
                      const void* params) {
  const std::string why = npu_unavailable_reason();
  DGA_REQUIRE(why.empty(), kRuntime, "device", why);
  check(aclrtSetDevice(device), "aclrtSetDevice");
  using Launch = int (*)(uint32_t, void*, const void*);
  const int rc = reinterpret_cast<Launch>(entry)(block_dim, stream, params);  // asynchronous: no synchronisation
  DGA_REQUIRE(rc == 0, kRuntime, "device", "launching ", name, " failed (", rc, "): ", acl_message());
}

void npu_launch(int device, const char* symbol, unsigned block_dim, void* stream, const void* params) {
  const std::string why = npu_unavailable_reason();
  DGA_REQUIRE(why.empty(), kRuntime, "device", why);
  void* fn = ::dlsym(kernels(), symbol);
  DGA_REQUIRE(fn != nullptr, kRuntime, "device", DGA_NPU_KERNELS_LIB, " has no kernel entry '", symbol, "'");
  npu_launch_entry(device, fn, symbol, block_dim, stream, params);
}

void npu_copy_rows_async(int device, void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                         size_t rows, void* stream) {
  check(aclrtSetDevice(device), "aclrtSetDevice");
  check(aclrtMemcpy2dAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
        "aclrtMemcpy2dAsync");
}

void* npu_workspace(int device, void* stream, size_t bytes) {
  struct Buffer {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  static std::mutex mu;
  static std::map<std::pair<int, void*>, Buffer> buffers;  // kept for the process's lifetime
  const std::lock_guard<std::mutex> lock(mu);
  Buffer& b = buffers[{device, stream}];
  if (b.bytes >= bytes && b.ptr != nullptr) return b.ptr;
  check(aclrtSetDevice(device), "aclrtSetDevice");
  if (b.ptr != nullptr) {  // kernels queued on the stream may still read the old buffer
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    check(aclrtFree(b.ptr), "aclrtFree");
    b = {};
  }
  check(aclrtMalloc(&b.ptr, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
  b.bytes = bytes;
  return b.ptr;
}

namespace {
constexpr size_t kIpcKeyLen = 65;           // aclrtIpcMemGetExportKey: the key's fixed length
constexpr uint64_t kIpcExportWhitelist = 0;  // ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT: importers set by pid
#ifdef ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS
constexpr uint64_t kIpcImportPeerAccess = ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS;
#else
constexpr uint64_t kIpcImportPeerAccess = 0x1;  // its documented value (CANN runtime API, IPC memory sharing)
#endif
}  // namespace

int npu_ipc_pid() {
  int32_t pid = 0;
  check(aclrtDeviceGetBareTgid(&pid), "aclrtDeviceGetBareTgid");
  return int(pid);
}

std::string npu_ipc_export(int device, void* ptr, size_t bytes, const std::vector<int>& importers) {
  check(aclrtSetDevice(device), "aclrtSetDevice");
  char key[kIpcKeyLen] = {};
  check(aclrtIpcMemGetExportKey(ptr, bytes, key, kIpcKeyLen, kIpcExportWhitelist), "aclrtIpcMemGetExportKey");
  std::vector<int32_t> pids(importers.begin(), importers.end());
  if (!pids.empty()) check(aclrtIpcMemSetImportPid(key, pids.data(), pids.size()), "aclrtIpcMemSetImportPid");
  return std::string(key);
}

void* npu_ipc_import(int device, const std::string& key) {
  check(aclrtSetDevice(device), "aclrtSetDevice");
  void* ptr = nullptr;
  check(aclrtIpcMemImportByKey(&ptr, key.c_str(), kIpcImportPeerAccess), "aclrtIpcMemImportByKey");
  return ptr;
}

void npu_ipc_close(const std::string& key) { check(aclrtIpcMemClose(key.c_str()), "aclrtIpcMemClose"); }

#endif

}  // namespace deepgemm_ascend::runtime
