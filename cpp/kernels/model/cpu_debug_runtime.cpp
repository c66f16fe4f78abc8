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
bool CheckFuncLoadData2dv2Impl(LoadData2dv2ApiParams&, const char*) { return true; }
bool CheckFuncDataCopyPadImpl(DataCopyPadApiParams&, const char*) { return true; }
bool CheckFuncInitConstValueImpl(CubeInitConstValueApiParams&, const char*) { return true; }
}  // namespace AscendC::check

namespace dga_model {
std::vector<deepgemm_ascend::npu_model::BufferPos> buffer_positions(bool vector) {
  using AscendC::Hardware;
  auto& cd = AscendC::ConstDefiner::Instance();
  if (vector) return {{"UB", cd.GetHardwareBaseAddr(Hardware::UB), cd.bufferInitLen.at(Hardware::UB)}};
  constexpr size_t kMxShare = 16;  // L0A_MX / L0B_MX: one byte per 16 bytes of L0A / L0B
  std::vector<deepgemm_ascend::npu_model::BufferPos> out;
  for (auto [hw, name] : {std::pair{Hardware::L1, "L1"}, {Hardware::L0A, "L0A"}, {Hardware::L0B, "L0B"},
                          {Hardware::L0C, "L0C"}})
    out.push_back({name, cd.GetHardwareBaseAddr(hw), cd.bufferInitLen.at(hw)});
  out.push_back({"L0A_MX", cd.cpuL0AMx, cd.bufferInitLen.at(Hardware::L0A) / kMxShare});
  out.push_back({"L0B_MX", cd.cpuL0BMx, cd.bufferInitLen.at(Hardware::L0B) / kMxShare});
  return out;
}

const uint8_t* mx_scales_of(const void* l0, bool b) {
  auto& cd = AscendC::ConstDefiner::Instance();
  const auto* base = cd.GetHardwareBaseAddr(b ? AscendC::Hardware::L0B : AscendC::Hardware::L0A);
  const uint8_t* mx = b ? cd.cpuL0BMx : cd.cpuL0AMx;
  return mx + (static_cast<const uint8_t*>(l0) - base) / 16;
}

uint8_t* mx_destination(uint64_t mx_dst, bool b) {
  auto& cd = AscendC::ConstDefiner::Instance();
  const auto hw = b ? AscendC::Hardware::L0B : AscendC::Hardware::L0A;
  const uintptr_t l0 = reinterpret_cast<uintptr_t>(cd.GetHardwareBaseAddr(hw));
  const size_t l0_bytes = cd.bufferInitLen.at(hw);
  uint8_t* mx = b ? cd.cpuL0BMx : cd.cpuL0AMx;
  const uintptr_t mx0 = reinterpret_cast<uintptr_t>(mx);
  if (mx_dst >= mx0 && mx_dst - mx0 < l0_bytes / 16) return mx + (mx_dst - mx0);
  constexpr uint64_t kMaxAddress16 = UINTPTR_MAX / 16;  // mx_dst * 16 must not wrap
  if (mx_dst > kMaxAddress16) return nullptr;
  const uintptr_t addr = uintptr_t(mx_dst) * 16;
  if (addr >= l0 && addr - l0 < l0_bytes) return mx + (addr - l0) / 16;
  return nullptr;
}
}  // namespace dga_model
