// JIT bindings: the cache, keys and builds with the host compiler (for tests and tooling).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "deepgemm_ascend/jit/cache.hpp"
#include "deepgemm_ascend/jit/gemm_jit.hpp"
#include "deepgemm_ascend/jit/npu_gemm_jit.hpp"
#include "deepgemm_ascend/runtime/acl_backend.hpp"
#include "tensor_desc.hpp"

namespace deepgemm_ascend::bindings {

void bind_jit(nb::module_& m) {
  using Guard = nb::call_guard<nb::gil_scoped_release>;
  using Strings = std::vector<std::string>;
  m.def("jit_cache_dir", &jit::cache_dir);
  m.def(
      "jit_npu_gemm_source",
      [](int64_t block_m, int64_t block_n, int64_t block_k, int64_t l0_k, const std::string& family,
         const std::string& kind) { return jit::npu_gemm_source({.block_m = block_m, .block_n = block_n,
                                                                 .block_k = block_k, .l0_k = l0_k}, family, kind); },
      nb::arg("block_m"), nb::arg("block_n"), nb::arg("block_k"), nb::arg("l0_k"), nb::arg("family") = "bf16",
      nb::arg("kind") = "");
  m.def("jit_npu_kernel_dir", &jit::npu_kernel_dir);
  m.def("jit_header_dirs", &jit::header_dirs);
  m.def("jit_included_files", &jit::included_files, nb::arg("source"), nb::arg("include_dirs"));
  m.def(
      "jit_cache_key",
      [](const std::string& name, const std::string& source, const Strings& dirs, const Strings& flags) {
        return jit::cache_key({name, source, dirs, flags}, jit::host_compiler());
      },
      nb::arg("name"), nb::arg("source"), nb::arg("include_dirs"), nb::arg("flags"));
  m.def(
      "jit_build",
      [](const std::string& name, const std::string& source, const Strings& dirs, const Strings& flags) {
        jit::BuildResult r;
        jit::load({name, source, dirs, flags}, jit::host_compiler(), &r);
        return std::make_tuple(r.path, r.key, r.cache_hit);
      },
      nb::arg("name"), nb::arg("source"), nb::arg("include_dirs"), nb::arg("flags"), Guard());
  m.def(
      "jit_call_int",
      [](const std::string& name, const std::string& source, const std::string& symbol, int x) {
        const auto lib = jit::load({name, source, {}, {}}, jit::host_compiler());
        return reinterpret_cast<int (*)(int)>(lib->symbol(symbol.c_str()))(x);
      },
      nb::arg("name"), nb::arg("source"), nb::arg("symbol"), nb::arg("x"), Guard());
  m.def("set_current_npu_stream", [](uintptr_t s) { runtime::set_current_npu_stream(reinterpret_cast<void*>(s)); },
        nb::arg("stream"));
  m.def("jit_host_compiler", [] {
    const auto& c = jit::host_compiler();
    return std::make_tuple(c.path, c.version);
  });
}

}  // namespace deepgemm_ascend::bindings
