// The MQA logits launchers (mqa_logits.asc: plain and paged, FP8 and FP4) on the model.
#include <iterator>

#include "npu_mqa_launch.hpp"
#include "model_entries.hpp"
#include "model_types.h"

namespace dga_model {
namespace {

namespace npu = deepgemm_ascend::tile::npu;

template <class Elem>
void mqa_logits(const void* p) { npu::run_mqa_logits<Elem>(*static_cast<const DgaMqaParams*>(p)); }
template <class Elem>
void paged_mqa_logits(const void* p) { npu::run_paged_mqa_logits<Elem>(*static_cast<const DgaPagedMqaParams*>(p)); }

const Entry kEntries[] = {
    {"dga_npu_launch_mqa_logits_fp8", &mqa_logits<fp8_e4m3fn_t>, Cores::kMix},
    {"dga_npu_launch_paged_mqa_logits_fp8", &paged_mqa_logits<fp8_e4m3fn_t>, Cores::kMix},
    {"dga_npu_launch_mqa_logits_fp4", &mqa_logits<fp4x2_e2m1_t>, Cores::kMix},
    {"dga_npu_launch_paged_mqa_logits_fp4", &paged_mqa_logits<fp4x2_e2m1_t>, Cores::kMix},
};

}  // namespace

Entries mqa_entries() { return {kEntries, std::size(kEntries)}; }

}  // namespace dga_model
