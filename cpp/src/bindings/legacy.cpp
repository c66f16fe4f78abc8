// Bindings of upstream's legacy BF16 GEMMs (deep_gemm.legacy); the M-grouped ones reach
// m_grouped_gemm_contiguous (module.cpp) with the row gather.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "deepgemm_ascend/api.hpp"
#include "tensor_desc.hpp"

namespace deepgemm_ascend::bindings {

void bind_legacy(nb::module_& m) {
  m.def(
      "legacy_k_grouped_gemm",
      [](const TensorDesc& a, const TensorDesc& b, const TensorDesc& d, const TensorDesc& k_indices,
         const TensorDesc& k_start, const TensorDesc& k_end, bool acc, bool gather_a) {
        legacy_k_grouped_gemm(view(a, "a"), view(b, "b"), view(d, "d"), view(k_indices, "k_indices"),
                              view(k_start, "k_start"), view(k_end, "k_end"), acc, gather_a);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("k_indices"), nb::arg("k_start"), nb::arg("k_end"),
      nb::arg("acc"), nb::arg("gather_a"), nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace deepgemm_ascend::bindings
