// The GEMM launchers (gemm_bf16.asc, gemm_fp8_mx.asc, gemm_fp4_mx.asc, gemm_fp8_block.asc) and the HC
// pre-norm's mix launch (hc_prenorm_gemm.asc) on the model.
#include <iterator>

#include "deepgemm_ascend/kernel/npu_gemm_families.hpp"
#include "npu_gemm_launch.hpp"
#include "npu_hc_launch.hpp"
#include "model_entries.hpp"
#include "model_types.h"

namespace dga_model {
namespace {

namespace npu = deepgemm_ascend::tile::npu;

// A launcher's params struct to its run_* template.
template <class Params, void (*Run)(const Params&)>
void run(const void* p) { Run(*static_cast<const Params*>(p)); }

// Every kind of every family of kernel/npu_gemm_families.hpp, named as in its .asc file.
#define DGA_MODEL_CORES_cube Cores::kCube
#define DGA_MODEL_CORES_mix Cores::kMix
#define DGA_MODEL_ENTRY(kind, suffix, Params, run_kind, family, Elem, S, cores)                                \
  {DGA_NPU_GEMM_STR(DGA_NPU_GEMM_LAUNCHER(family, suffix)), &run<Params, &npu::run_kind<Elem, npu::Scales::S>>, \
   DGA_MODEL_CORES_##cores},
#define DGA_MODEL_FAMILY(family, Elem, S, cores) DGA_NPU_GEMM_KINDS(DGA_MODEL_ENTRY, family, Elem, S, cores)

const Entry kEntries[] = {
    DGA_NPU_GEMM_FAMILIES(DGA_MODEL_FAMILY)  // each entry ends in a comma
    {"dga_npu_launch_hc_prenorm_gemm", &run<DgaHcGemmParams, &npu::run_hc_prenorm_gemm>, Cores::kMix}};
#undef DGA_MODEL_FAMILY
#undef DGA_MODEL_ENTRY
#undef DGA_MODEL_CORES_mix
#undef DGA_MODEL_CORES_cube

}  // namespace

Entries gemm_entries() { return {kEntries, std::size(kEntries)}; }

}  // namespace dga_model
