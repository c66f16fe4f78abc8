// The NPU backend over ACL (built with CANN only, DGA_WITH_NPU): device selection, core counts from
// aclrtGetDeviceInfo, kernels from the bisheng-built libdga_npu_kernels_<arch>.so launched
// asynchronously on the caller's aclrtStream (Python passes torch_npu's current stream). Errors carry
// ACL's message. NOT validated on hardware (scripts/npu_validate.sh runs the on-device suite).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace deepgemm_ascend::runtime {

// True when this build contains the NPU backend (CANN found at configure time).
bool npu_backend_built();
// Devices ACL sees (0 when not built or no driver); never throws.
int npu_device_count();
// Why the NPU backend cannot run here ("" when it can): not built, no driver, no device.
std::string npu_unavailable_reason();

// Launches `symbol` (a dga_npu_launch_* entry) with block_dim blocks on `stream` (an aclrtStream; null
// = the default stream) on device `device`. Throws RuntimeError with ACL's message on failure.
void npu_launch(int device, const char* symbol, unsigned block_dim, void* stream, const void* params);
// The same for an entry found elsewhere (a JIT-built kernel library): `entry` is its address, `name`
// names it in errors.
void npu_launch_entry(int device, void* entry, const char* name, unsigned block_dim, void* stream, const void* params);
// Copies `rows` rows of `row_bytes` bytes device to device (pitches in bytes), asynchronously on `stream`.
void npu_copy_rows_async(int device, void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                         size_t rows, void* stream);
// At least `bytes` of device memory for the kernels launched on `stream` (null = the default stream) of
// `device`, kept per (device, stream) and grown on demand: before a grown buffer replaces the old one,
// the stream is synchronised (the only host wait), so kernels already queued on it finish with the old.
// Valid until the next request for the same device and stream.
void* npu_workspace(int device, void* stream, size_t bytes);
// Cube cores of `device` (ACL_DEV_ATTR_AICORE_CORE_NUM).
int npu_cube_cores(int device);
// The NPU arch (--npu-arch, e.g. dav-3510) the loaded kernels library is built for.
std::string npu_kernels_arch();

// Device memory shared between the processes of one node (ACL's IPC memory, which the 950 supports): the
// calling process's id as ACL reports it (aclrtDeviceGetBareTgid); `bytes` at `ptr` on `device` exported
// under a key that only the processes `importers` may import; a key imported into this process (the
// address to use on `device`, peer access enabled); a key closed (importers first, then the exporter).
// Throw RuntimeError with ACL's message (or why there is no NPU backend).
int npu_ipc_pid();
std::string npu_ipc_export(int device, void* ptr, size_t bytes, const std::vector<int>& importers);
void* npu_ipc_import(int device, const std::string& key);
void npu_ipc_close(const std::string& key);

// The aclrtStream launches of this thread go to (null = the default stream); the Python layer sets
// torch_npu's current stream before each NPU call, C++ callers their own.
void set_current_npu_stream(void* stream);
void* current_npu_stream();

}  // namespace deepgemm_ascend::runtime
