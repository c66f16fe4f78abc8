// The AIV-only launchers (hc_prenorm.asc, convert_rows.asc, swiglu.asc) on the model.
#include <iterator>

#include "npu_convert.hpp"
#include "npu_hc_vector.hpp"
#include "npu_swiglu.hpp"
#include "model_entries.hpp"
#include "model_types.h"

namespace dga_model {
namespace {

namespace npu = deepgemm_ascend::tile::npu;

void convert_rows(const void* p) { npu::run_convert_rows(*static_cast<const DgaConvertParams*>(p)); }
void swiglu(const void* p) { npu::run_swiglu(*static_cast<const DgaSwigluParams*>(p)); }
void hc_prenorm_vector(const void* p) { npu::run_hc_prenorm_vector(*static_cast<const DgaHcPrenormParams*>(p)); }

const Entry kEntries[] = {
    {"dga_npu_launch_hc_prenorm_vector", &hc_prenorm_vector, Cores::kVector},
    {"dga_npu_launch_convert_rows", &convert_rows, Cores::kVector},
    {"dga_npu_launch_swiglu", &swiglu, Cores::kVector},
};

}  // namespace

Entries vector_entries() { return {kEntries, std::size(kEntries)}; }

}  // namespace dga_model
