// The GEMM launchers (gemm_bf16.asc, gemm_fp8_mx.asc, gemm_fp4_mx.asc, gemm_fp8_block.asc) on the model.
#include <iterator>

#include "npu_gemm_launch.hpp"
#include "model_entries.hpp"
#include "model_types.h"

namespace dga_model {
namespace {

namespace npu = deepgemm_ascend::tile::npu;

template <class Elem, npu::Scales S>
void dense(const void* p) { npu::run_gemm<Elem, S>(*static_cast<const DgaGemmParams*>(p)); }
template <class Elem, npu::Scales S>
void masked(const void* p) { npu::run_masked_gemm<Elem, S>(*static_cast<const DgaMaskedGemmParams*>(p)); }
template <class Elem, npu::Scales S>
void contiguous(const void* p) { npu::run_contiguous_gemm<Elem, S>(*static_cast<const DgaContiguousGemmParams*>(p)); }
template <class Elem, npu::Scales S>
void k_grouped(const void* p) { npu::run_k_grouped_gemm<Elem, S>(*static_cast<const DgaKGroupedGemmParams*>(p)); }

// The four launchers of a family, named as in its .asc file.
#define DGA_MODEL_FAMILY(name, Elem, S, cores)                                             \
  {"dga_npu_launch_gemm_" name, &dense<Elem, S>, cores},                                   \
      {"dga_npu_launch_gemm_" name "_masked", &masked<Elem, S>, cores},                    \
      {"dga_npu_launch_gemm_" name "_contiguous", &contiguous<Elem, S>, cores},            \
      {"dga_npu_launch_gemm_" name "_k_grouped", &k_grouped<Elem, S>, cores}

const Entry kEntries[] = {
    DGA_MODEL_FAMILY("bf16", bfloat16_t, npu::Scales::kNone, Cores::kCube),
    DGA_MODEL_FAMILY("fp8_mx", fp8_e4m3fn_t, npu::Scales::kMx, Cores::kCube),
    DGA_MODEL_FAMILY("fp4_mx", fp4x2_e2m1_t, npu::Scales::kMx, Cores::kCube),
    DGA_MODEL_FAMILY("fp8_block", fp8_e4m3fn_t, npu::Scales::kPromoted, Cores::kMix),
};
#undef DGA_MODEL_FAMILY

}  // namespace

Entries gemm_entries() { return {kEntries, std::size(kEntries)}; }

}  // namespace dga_model
