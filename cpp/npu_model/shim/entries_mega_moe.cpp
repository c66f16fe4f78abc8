// The Mega MoE launchers (mega_moe.asc: barriers, route, gather, scatter, combine) on the model.
#include <iterator>

#include "npu_mega_moe.hpp"
#include "model_entries.hpp"
#include "model_types.h"

namespace dga_model {
namespace {

namespace npu = deepgemm_ascend::tile::npu;

template <npu::MegaMoeStepKind S>
void mega_moe(const void* p) { npu::run_mega_moe<S>(*static_cast<const DgaMegaMoeParams*>(p)); }

const Entry kEntries[] = {
    {"dga_npu_launch_mega_moe_dispatch_barrier", &mega_moe<npu::MegaMoeStepKind::kDispatchBarrier>, Cores::kVector},
    {"dga_npu_launch_mega_moe_route", &mega_moe<npu::MegaMoeStepKind::kRoute>, Cores::kVector},
    {"dga_npu_launch_mega_moe_gather", &mega_moe<npu::MegaMoeStepKind::kGather>, Cores::kVector},
    {"dga_npu_launch_mega_moe_scatter", &mega_moe<npu::MegaMoeStepKind::kScatter>, Cores::kVector},
    {"dga_npu_launch_mega_moe_combine_barrier", &mega_moe<npu::MegaMoeStepKind::kCombineBarrier>, Cores::kVector},
    {"dga_npu_launch_mega_moe_combine", &mega_moe<npu::MegaMoeStepKind::kCombine>, Cores::kVector},
};

}  // namespace

Entries mega_moe_entries() { return {kEntries, std::size(kEntries)}; }

}  // namespace dga_model
