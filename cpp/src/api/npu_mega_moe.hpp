// Mega MoE on the NPU target (npu_mega_moe.cpp): the launches of one rank's call, and the SwiGLU stage alone.
#pragma once

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/block/swiglu.hpp"
#include "deepgemm_ascend/comm/mega_moe_layout.hpp"
#include "deepgemm_ascend/core/tensor_view.hpp"

namespace deepgemm_ascend::api {

// One rank's Mega MoE call (arguments checked by the caller): BF16, or FP8 x FP4 with the weights' UE8M0
// scales l1_sf / l2_sf (K-major rows).
void npu_mega_moe(const MegaMoeBuffer& buf, const comm::MegaMoeRegions& regions, const core::TensorView& y,
                  const core::TensorView& l1_w, const core::TensorView* l1_sf, const core::TensorView& l2_w,
                  const core::TensorView* l2_sf, const core::TensorView* recv_stats, const block::SwigluParams& act);

// The SwiGLU stage on the vector cores (swiglu.asc): h bf16 [M, 2I] -> out [M, I] (e4m3 with out_sf, or bf16);
// with ends (int32 psum end offsets in device memory, groups from starts aligned to `align`) only the rows
// of the groups.
void npu_swiglu(const core::TensorView& h, const core::TensorView& weights, const core::TensorView& out,
                const core::TensorView* out_sf, const block::SwigluParams& p, const core::TensorView* ends = nullptr,
                int64_t align = 1);

}  // namespace deepgemm_ascend::api
