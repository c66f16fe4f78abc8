// The pieces of the devkit's CPU-debug runtime that are closed (or need securec / dlog), defined for
// running NPU kernel code on the instruction model in one process: the core globals (stub_def.h), GM
// allocation, the process lock (one process: nothing to lock), the bf16 class's members (round to nearest
// even) and the parameter checks the reached headers call (the model checks what it models).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernel_operator.h"

#include "model_runner.hpp"

int64_t block_idx = 0;
int64_t block_num = 1;
int32_t sub_block_idx = 0;
int32_t g_taskRation = 1;
int32_t g_coreType = AscendC::AIC;
uint64_t g_fixpipeNdNzParam = 0;  // the parameter checks read it (kernel_check_data_copy_util.h); never set here
KernelMode g_kernelMode = KernelMode::AIC_MODE;
namespace AscendC {
bool g_isAtomic = false;
ProcessLock* ProcessLock::processLock = nullptr;
ProcessLock* ProcessLock::CreateLock() { static ProcessLock lock; return &lock; }
ProcessLock::ProcessLock() {}
ProcessLock::~ProcessLock() {}
int ProcessLock::Write() { return 0; }
int ProcessLock::Read() { return 0; }
int ProcessLock::Unlock() { return 0; }
void* GmAlloc(size_t size) { return std::aligned_alloc(4096, (size + 4095) / 4096 * 4096); }
void GmFree(void* p) { std::free(p); }
}  // namespace AscendC

namespace bfloat16 {
uint16_t Bf16T::FloatToBf16(const float& f) const {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
float Bf16T::ToFloat() const {
  const uint32_t u = uint32_t(val) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
Bf16T::operator float() const { return ToFloat(); }
Bf16T& Bf16T::operator=(const Bf16T& b) { val = b.val; return *this; }
Bf16T& Bf16T::operator=(const float& f) { val = FloatToBf16(f); return *this; }
}  // namespace bfloat16

namespace AscendC::check {
bool CheckFunVecBinaryScalarImpl(VecBinaryScalarApiParams&, const uint64_t, const char*) { return true; }
bool CheckFunVecBinaryScalarImpl(VecBinaryScalarApiParams&, const char*) { return true; }
bool CheckFunDupImpl(VecDupApiParams&, const char*) { return true; }
bool CheckFuncVecBinaryImpl(VecBinaryApiParams&, const char*) { return true; }
bool CheckFuncLoadData2dv2Impl(LoadData2dv2ApiParams&, const char*) { return true; }
bool CheckFuncLoadData3dv2Impl(LoadData3dv2ApiParams&, const char*) { return true; }
bool CheckFuncDataCopyPadImpl(DataCopyPadApiParams&, const char*) { return true; }
bool CheckFuncDataCopyImpl(DataCopyApiParams&, const char*) { return true; }
bool CheckFuncInitConstValueImpl(CubeInitConstValueApiParams&, const char*) { return true; }
}  // namespace AscendC::check

namespace dga_model {
namespace {
constexpr size_t kMxShare = 16;  // L0A_MX / L0B_MX: one byte per 16 bytes of L0A / L0B

// An L0A or L0B buffer with its MX scale buffer (the devkit's CPU buffers).
struct MxSide {
  const uint8_t* l0;
  size_t l0_bytes;
  uint8_t* mx;
};

MxSide mx_side(bool b) {
  auto& cd = AscendC::ConstDefiner::Instance();
  const auto hw = b ? AscendC::Hardware::L0B : AscendC::Hardware::L0A;
  return {.l0 = cd.GetHardwareBaseAddr(hw),
          .l0_bytes = cd.bufferInitLen.at(hw),
          .mx = b ? cd.cpuL0BMx : cd.cpuL0AMx};
}
}  // namespace

std::vector<deepgemm_ascend::npu_model::BufferPos> buffer_positions(bool vector) {
  using AscendC::Hardware;
  auto& cd = AscendC::ConstDefiner::Instance();
  if (vector) return {{"UB", cd.GetHardwareBaseAddr(Hardware::UB), cd.bufferInitLen.at(Hardware::UB)}};
  std::vector<deepgemm_ascend::npu_model::BufferPos> out;
  for (auto [hw, name] : {std::pair{Hardware::L1, "L1"}, {Hardware::L0A, "L0A"}, {Hardware::L0B, "L0B"},
                          {Hardware::L0C, "L0C"}})
    out.push_back({name, cd.GetHardwareBaseAddr(hw), cd.bufferInitLen.at(hw)});
  for (auto [b, name] : {std::pair{false, "L0A_MX"}, {true, "L0B_MX"}}) {
    const MxSide side = mx_side(b);
    out.push_back({name, side.mx, side.l0_bytes / kMxShare});
  }
  return out;
}

const uint8_t* mx_scales_of(const void* l0, bool b) {
  const MxSide side = mx_side(b);
  return side.mx + (static_cast<const uint8_t*>(l0) - side.l0) / ptrdiff_t(kMxShare);
}

uint8_t* mx_destination(uint64_t mx_dst, bool b) {
  const MxSide side = mx_side(b);
  const uintptr_t l0 = reinterpret_cast<uintptr_t>(side.l0), mx0 = reinterpret_cast<uintptr_t>(side.mx);
  if (mx_dst >= mx0 && mx_dst - mx0 < side.l0_bytes / kMxShare) return side.mx + (mx_dst - mx0);
  if (mx_dst > UINTPTR_MAX / kMxShare) return nullptr;  // mx_dst * 16 would wrap
  const uintptr_t addr = uintptr_t(mx_dst) * kMxShare;
  if (addr >= l0 && addr - l0 < side.l0_bytes) return side.mx + (addr - l0) / kMxShare;
  return nullptr;
}
}  // namespace dga_model
