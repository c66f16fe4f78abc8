// The model's self-test launchers (model_probes.h) on the model.
#include <cstring>
#include <iterator>

#include "kernel_operator.h"

#include "model_entries.hpp"
#include "model_probes.h"
#include "model_types.h"

namespace dga_model {
namespace {

constexpr size_t kUnitBytes = 32, kL0Offset = 512, kMxShare = 16;

void mx_scale_load(const void* p) {
  const auto& q = *static_cast<const DgaMxProbeParams*>(p);
  auto& cd = AscendC::ConstDefiner::Instance();
  uint8_t* l1 = cd.GetHardwareBaseAddr(AscendC::Hardware::L1);
  uint8_t* l0 = cd.GetHardwareBaseAddr(q.b ? AscendC::Hardware::L0B : AscendC::Hardware::L0A) + kL0Offset;
  uint8_t* mx = (q.b ? cd.cpuL0BMx : cd.cpuL0AMx) + kL0Offset / kMxShare;
  std::memcpy(l1, reinterpret_cast<const void*>(uintptr_t(q.in)), kUnitBytes);
  const uint64_t mx_dst = q.form == kDgaMxDstWrapper    ? uint64_t(uintptr_t(mx))
                          : q.form == kDgaMxDstL0Over16 ? uint64_t(uintptr_t(l0)) / kMxShare
                                                        : uint64_t(12345);
  if (q.b) load_cbuf_to_cb_mx(mx_dst, l1, 0, 0, 1, 1, 1, 1);
  else load_cbuf_to_ca_mx(mx_dst, l1, 0, 0, 1, 1, 1, 1);
  std::memcpy(reinterpret_cast<void*>(uintptr_t(q.out)), mx, kUnitBytes);
}

const Entry kEntries[] = {
    {"dga_npu_launch_probe_mx_scale_load", &mx_scale_load, Cores::kCube},
};

}  // namespace

Entries probe_entries() { return {kEntries, std::size(kEntries)}; }

}  // namespace dga_model
