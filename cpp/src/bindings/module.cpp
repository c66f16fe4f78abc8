// deepgemm_ascend._C: the nanobind layer. Tensors arrive as plain descriptors built by the Python
// package (storage pointer, storage offset, dtype name, shape, strides, device), so the extension is
// independent of torch. Kernels run with the GIL released.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/core/cpu_features.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/layout/ue8m0_values.hpp"
#include "deepgemm_ascend/runtime/host_arch.hpp"
#include "deepgemm_ascend/runtime/host_peak.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"
#include "tensor_desc.hpp"

namespace nb = nanobind;
namespace dga = deepgemm_ascend;
using dga::core::DType;
using dga::core::ErrorKind;

namespace {

using dga::bindings::TensorDesc;
using dga::bindings::view;

// Scalar codecs over whole contiguous buffers, for tests and quantisation helpers.
void encode(const std::string& fmt, const TensorDesc& src, const TensorDesc& dst) {
  const auto s = view(src, "src"), d = view(dst, "dst");
  DGA_REQUIRE(s.dtype == DType::kFP32 && s.is_contiguous(), kValue, "src", "expected a contiguous float32 tensor");
  DGA_REQUIRE(d.is_contiguous() && d.numel() == s.numel(), kValue, "dst", "expected a contiguous tensor of ",
              s.numel(), " elements");
  const float* in = s.as<const float>();
  const int64_t n = s.numel();
  auto put8 = [&](auto f) { DGA_REQUIRE(dga::core::itemsize(d.dtype) == 1, kType, "dst", "expected 1-byte elements");
                            for (int64_t i = 0; i < n; ++i) d.as<uint8_t>()[i] = f(in[i]); };
  auto put16 = [&](auto f) { DGA_REQUIRE(dga::core::itemsize(d.dtype) == 2, kType, "dst", "expected 2-byte elements");
                             for (int64_t i = 0; i < n; ++i) d.as<uint16_t>()[i] = f(in[i]); };
  using namespace dga::core;
  if (fmt == "bfloat16") put16(float_to_bf16);
  else if (fmt == "float16") put16(float_to_fp16);
  else if (fmt == "float8_e4m3fn") put8(float_to_e4m3);
  else if (fmt == "float8_e5m2") put8(float_to_e5m2);
  else if (fmt == "float4_e2m1") put8(float_to_e2m1);
  else if (fmt == "float8_e8m0fnu") put8([](float x) { return float_to_ue8m0(x); });
  else if (fmt == "float8_e8m0fnu_ceil") put8([](float x) { return float_to_ue8m0(x, Ue8m0Rounding::kCeil); });
  else fail(ErrorKind::kValue, "format", "unknown format '", fmt, "'");
}

void decode(const std::string& fmt, const TensorDesc& src, const TensorDesc& dst) {
  const auto s = view(src, "src"), d = view(dst, "dst");
  DGA_REQUIRE(d.dtype == DType::kFP32 && d.is_contiguous() && d.numel() == s.numel(), kValue, "dst",
              "expected a contiguous float32 tensor of ", s.numel(), " elements");
  DGA_REQUIRE(s.is_contiguous(), kValue, "src", "expected a contiguous tensor");
  float* out = d.as<float>();
  const int64_t n = s.numel();
  using namespace dga::core;
  auto get8 = [&](auto f) { for (int64_t i = 0; i < n; ++i) out[i] = f(s.as<const uint8_t>()[i]); };
  auto get16 = [&](auto f) { for (int64_t i = 0; i < n; ++i) out[i] = f(s.as<const uint16_t>()[i]); };
  if (fmt == "bfloat16") get16(bf16_to_float);
  else if (fmt == "float16") get16(fp16_to_float);
  else if (fmt == "float8_e4m3fn") get8(e4m3_to_float);
  else if (fmt == "float8_e5m2") get8(e5m2_to_float);
  else if (fmt == "float4_e2m1") get8(e2m1_to_float);
  else if (fmt == "float8_e8m0fnu") get8(ue8m0_to_float);
  else fail(ErrorKind::kValue, "format", "unknown format '", fmt, "'");
}

// The UE8M0 value check of a host scale tensor, limited to the rows an output depends on when `layout` (host
// memory, named `layout_arg`) is given: kind "psum" (int32 [G] end offsets of an M-grouped psum layout: its groups'
// rows), "ids" (int32 [M] per-row group ids: rows with an id >= 0) or "masked" (int32 [G] masked_m: rows below
// masked_m[g] of group g).
void require_ue8m0_values(const TensorDesc& sf, const std::string& arg, const std::optional<TensorDesc>& layout,
                          const std::string& layout_arg, const std::string& kind) {
  const auto v = view(sf, arg);
  std::optional<dga::layout::ScaleRows> rows;
  if (layout) {
    const auto p = view(*layout, layout_arg);
    DGA_REQUIRE(p.dtype == DType::kInt32 && p.ndim == 1 && p.is_contiguous() &&
                    p.device.kind == dga::core::DeviceKind::kHost,
                kType, layout_arg, "expected a contiguous int32 1-D tensor in host memory");
    const auto* e = p.as<const int32_t>();
    const int64_t n = p.shape[0], sf_rows = v.ndim >= 2 ? v.size(-2) : 1;
    if (kind == "psum") {
      rows = dga::layout::ScaleRows{{dga::layout::psum_rows(std::vector<int64_t>(e, e + n), sf_rows,
                                                            dga::get_mk_alignment_for_contiguous_layout(),
                                                            layout_arg.c_str())}};
    } else if (kind == "ids") {
      DGA_REQUIRE(n == sf_rows, kValue, layout_arg, "expected ", sf_rows, " group ids (one per row of ", arg,
                  "), got ", n);
      rows = dga::layout::ScaleRows{{dga::layout::id_rows(e, n)}};
    } else if (kind == "masked") {
      const int64_t groups = v.ndim == 3 ? v.shape[0] : 1;
      DGA_REQUIRE(n == groups, kValue, layout_arg, "expected ", groups, " row counts (one per group of ", arg,
                  "), got ", n);
      rows = dga::layout::masked_rows(e, n, sf_rows);
    } else {
      fail(ErrorKind::kValue, "kind", "expected 'psum', 'ids' or 'masked', got '", kind, "'");
    }
  }
  dga::layout::require_ue8m0_values(v, arg.c_str(), rows ? &*rows : nullptr);
}

// The 950's documented rates the timing model runs at (arch/ascend950.hpp, kTiming): the bounds of
// `deepgemm-ascend model` are computed from these, never from a model run.
nb::dict npu_rates() {
  using A = dga::arch::Ascend950;
  constexpr auto t = A::kTiming;
  nb::dict cube;  // FLOP a cycle per core and operand type
  cube["bf16"] = double(A::kCubeFp16FlopsPerCycle);
  cube["fp32"] = double(A::kCubeFp16FlopsPerCycle) * t.mmad_k_fp32 / t.mmad_k_fp16;
  cube["fp8"] = double(A::kCubeFp8FlopsPerCycle);
  cube["fp4"] = double(A::kCubeFp4FlopsPerCycle);
  nb::dict d;
  d["clock_ghz"] = t.clock_ghz;
  d["cube_cores"] = t.cube_cores;
  d["vector_cores"] = t.cube_cores * t.vector_cores_per_cube;
  d["cube_flops_per_cycle"] = cube;
  d["vector_bytes_per_cycle"] = double(A::kVectorBytesPerCycle) / t.vector_cycles_per_op;
  d["hbm_bytes_per_cycle"] = t.hbm_bytes_per_cycle;
  d["launch_us"] = t.launch_us;
  return d;
}

nb::dict info() {
  nb::dict d;
  d["version"] = dga::version();
  std::vector<std::string> backends{"host"};
#ifdef DGA_WITH_NPU
  backends.emplace_back("npu");
  d["cann"] = true;
#else
  d["cann"] = false;
#endif
  if (dga::runtime::npu_model_available()) backends.emplace_back("npu-model");
  d["backends"] = backends;
  d["backend"] = dga::runtime::backend();
  d["npu_model"] = dga::runtime::npu_model_available() ? dga::runtime::npu_model_library_path()
                                                        : "unavailable: " + dga::runtime::npu_model_unavailable_reason();
  const auto& f = dga::core::cpu_features();
  d["cpu_vendor"] = f.vendor;
  d["cpu_features"] = f.names();
  std::vector<std::string> isas;
  for (auto i : dga::tile::host::supported_host_isas()) isas.emplace_back(dga::tile::host::name(i));
  d["host_isas"] = isas;
  d["host_isa"] = std::string(dga::tile::host::name(dga::tile::host::active_host_isa()));
  if (const auto& race = dga::tile::host::fma_width_race(); race.avx2 > 0) {  // CPUs with both avx512 and avx2
    d["avx512_fma_gain"] = race.avx512 / race.avx2;
    d["avx512_min_fma_gain"] = dga::arch::Host::kAvx512MinFmaGain;
  }
  d["ai_cores"] = dga::get_num_ai_cores();
  d["max_ai_cores"] = dga::get_max_ai_cores();
  d["host_threads"] = std::string(dga::runtime::HostBackend::uses_openmp() ? "openmp" : "library");
  d["checked"] = dga::runtime::checked_mode();
  d["host_arch"] = std::string(dga::runtime::name(dga::runtime::host_arch()));
  return d;
}

}  // namespace

NB_MODULE(_C, m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const dga::core::Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.kind()) {
        case ErrorKind::kType: type = PyExc_TypeError; break;
        case ErrorKind::kValue: type = PyExc_ValueError; break;
        case ErrorKind::kNotImplemented: type = PyExc_NotImplementedError; break;
        case ErrorKind::kRuntime: break;
      }
      PyErr_SetString(type, e.what());
    }
  });

  using Guard = nb::call_guard<nb::gil_scoped_release>;
  // A scale recipe of one operand: one scale per gran_mn rows (or columns) and gran_k K values.
  nb::class_<dga::ScaleRecipe>(m, "ScaleRecipe")
      .def(nb::init<>())
      .def(
          "__init__",
          [](dga::ScaleRecipe* r, int64_t gran_mn, int64_t gran_k) {
            new (r) dga::ScaleRecipe{.gran_mn = gran_mn, .gran_k = gran_k};
          },
          nb::arg("gran_mn"), nb::arg("gran_k"))
      .def_rw("gran_mn", &dga::ScaleRecipe::gran_mn)
      .def_rw("gran_k", &dga::ScaleRecipe::gran_k)
      .def("__repr__", [](const dga::ScaleRecipe& r) {
        return "ScaleRecipe(gran_mn=" + std::to_string(r.gran_mn) + ", gran_k=" + std::to_string(r.gran_k) + ")";
      });
  m.def(
      "bf16_gemm",
      [](const std::string& layout, const TensorDesc& a, const TensorDesc& b, const TensorDesc& d,
         const std::optional<TensorDesc>& c) {
        const auto va = view(a, "a"), vb = view(b, "b"), vd = view(d, "d");
        const std::optional<dga::TensorView> vc = c ? std::optional(view(*c, "c")) : std::nullopt;
        dga::bf16_gemm(layout, va, vb, vd, vc ? &*vc : nullptr);
      },
      nb::arg("layout"), nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c").none(), Guard());
  m.def(
      "fp8_fp4_gemm",
      [](const std::string& layout, const TensorDesc& a, const TensorDesc& sfa, const TensorDesc& b,
         const TensorDesc& sfb, const TensorDesc& d, const std::optional<TensorDesc>& c,
         const dga::ScaleRecipe& recipe_a, const dga::ScaleRecipe& recipe_b) {
        const auto va = view(a, "a"), vsa = view(sfa, "sfa"), vb = view(b, "b"), vsb = view(sfb, "sfb"),
                   vd = view(d, "d");
        const std::optional<dga::TensorView> vc = c ? std::optional(view(*c, "c")) : std::nullopt;
        dga::fp8_fp4_gemm(layout, va, vsa, vb, vsb, vd, vc ? &*vc : nullptr, recipe_a, recipe_b);
      },
      nb::arg("layout"), nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"),
      nb::arg("c").none(), nb::arg("recipe_a"), nb::arg("recipe_b"), Guard());
  m.def(
      "fp8_gemm_nt_skip_head_mid",
      [](const TensorDesc& a, const TensorDesc& sfa, const TensorDesc& b, const TensorDesc& sfb, const TensorDesc& d,
         int64_t left, int64_t mid, int64_t right, const dga::ScaleRecipe& recipe_a,
         const dga::ScaleRecipe& recipe_b) {
        dga::fp8_gemm_nt_skip_head_mid(view(a, "a"), view(sfa, "sfa"), view(b, "b"), view(sfb, "sfb"), view(d, "d"),
                                       left, mid, right, recipe_a, recipe_b);
      },
      nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("left"), nb::arg("mid"),
      nb::arg("right"), nb::arg("recipe_a"), nb::arg("recipe_b"), Guard());
  const auto opt_view = &dga::bindings::opt_view;
  m.def(
      "m_grouped_gemm_contiguous",
      [opt_view](const std::string& layout, const TensorDesc& a, const std::optional<TensorDesc>& sfa,
                 const TensorDesc& b, const std::optional<TensorDesc>& sfb, const TensorDesc& d,
                 const TensorDesc& grouped_layout, bool use_psum_layout, bool ensure_zero_padding,
                 const dga::ScaleRecipe& recipe_a, const dga::ScaleRecipe& recipe_b,
                 const std::optional<TensorDesc>& a_rows) {
        const auto va = view(a, "a"), vb = view(b, "b"), vd = view(d, "d"), vg = view(grouped_layout, "grouped_layout");
        const auto vsa = opt_view(sfa, "sfa"), vsb = opt_view(sfb, "sfb"), vr = opt_view(a_rows, "m_row_indices");
        dga::m_grouped_gemm_contiguous(layout, va, vsa ? &*vsa : nullptr, vb, vsb ? &*vsb : nullptr, vd, vg,
                                       use_psum_layout, ensure_zero_padding, recipe_a, recipe_b, vr ? &*vr : nullptr);
      },
      nb::arg("layout"), nb::arg("a"), nb::arg("sfa").none(), nb::arg("b"), nb::arg("sfb").none(), nb::arg("d"),
      nb::arg("grouped_layout"), nb::arg("use_psum_layout"), nb::arg("ensure_zero_padding"), nb::arg("recipe_a"),
      nb::arg("recipe_b"), nb::arg("a_rows").none() = nb::none(), Guard());
  m.def(
      "m_grouped_gemm_masked",
      [opt_view](const TensorDesc& a, const std::optional<TensorDesc>& sfa, const TensorDesc& b,
                 const std::optional<TensorDesc>& sfb, const TensorDesc& d, const TensorDesc& masked_m,
                 int64_t expected_m, const dga::ScaleRecipe& recipe_a, const dga::ScaleRecipe& recipe_b) {
        const auto va = view(a, "a"), vb = view(b, "b"), vd = view(d, "d"), vm = view(masked_m, "masked_m");
        const auto vsa = opt_view(sfa, "sfa"), vsb = opt_view(sfb, "sfb");
        dga::m_grouped_gemm_masked(va, vsa ? &*vsa : nullptr, vb, vsb ? &*vsb : nullptr, vd, vm, expected_m,
                                   recipe_a, recipe_b);
      },
      nb::arg("a"), nb::arg("sfa").none(), nb::arg("b"), nb::arg("sfb").none(), nb::arg("d"), nb::arg("masked_m"),
      nb::arg("expected_m"), nb::arg("recipe_a"), nb::arg("recipe_b"), Guard());
  m.def(
      "k_grouped_gemm",
      [opt_view](const TensorDesc& a, const std::optional<TensorDesc>& sfa, const TensorDesc& b,
                 const std::optional<TensorDesc>& sfb, const TensorDesc& d, const std::vector<int64_t>& ks,
                 const TensorDesc& c, const dga::ScaleRecipe& recipe,
                 const std::optional<std::vector<int64_t>>& psum_ends,
                 const std::optional<TensorDesc>& device_ends) {
        const auto va = view(a, "a"), vb = view(b, "b"), vd = view(d, "d"), vc = view(c, "c");
        const auto vsa = opt_view(sfa, "sfa"), vsb = opt_view(sfb, "sfb"), ve = opt_view(device_ends, "grouped_layout");
        dga::k_grouped_gemm(va, vsa ? &*vsa : nullptr, vb, vsb ? &*vsb : nullptr, vd, ks, vc, recipe, recipe,
                            psum_ends ? &*psum_ends : nullptr, ve ? &*ve : nullptr);
      },
      nb::arg("a"), nb::arg("sfa").none(), nb::arg("b"), nb::arg("sfb").none(), nb::arg("d"), nb::arg("ks"),
      nb::arg("c"), nb::arg("recipe"), nb::arg("psum_ends").none(), nb::arg("device_ends").none() = nb::none(),
      Guard());
  m.def(
      "k_grouped_fp8_gemm_nt",
      [](const TensorDesc& a, const TensorDesc& sfa, const TensorDesc& b, const TensorDesc& sfb, const TensorDesc& d,
         const std::vector<int64_t>& ks, const TensorDesc& c) {
        dga::k_grouped_fp8_gemm_nt(view(a, "a"), view(sfa, "sfa"), view(b, "b"), view(sfb, "sfb"), view(d, "d"), ks,
                                   view(c, "c"));
      },
      Guard());
  m.def(
      "tf32_hc_prenorm_gemm",
      [](const TensorDesc& a, const TensorDesc& b, const TensorDesc& d, const TensorDesc& sqr_sum,
         std::optional<int64_t> num_splits) {
        // None: unsplit (the C++ API's 0); a given count must be positive.
        DGA_REQUIRE(!num_splits || *num_splits > 0, kValue, "num_splits", "must be a positive int or None, got ",
                    *num_splits);
        dga::tf32_hc_prenorm_gemm(view(a, "a"), view(b, "b"), view(d, "d"), view(sqr_sum, "sqr_sum"),
                                  num_splits.value_or(0));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("sqr_sum"), nb::arg("num_splits").none(), Guard());
  m.def(
      "einsum",
      [](const std::string& expr, const TensorDesc& a, const TensorDesc& b, const TensorDesc& d,
         const std::optional<TensorDesc>& c) {
        const std::optional<dga::TensorView> vc = c ? std::optional(view(*c, "c")) : std::nullopt;
        dga::einsum(expr, view(a, "a"), view(b, "b"), view(d, "d"), vc ? &*vc : nullptr);
      },
      nb::arg("expr"), nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("c").none(), Guard());
  m.def(
      "fp8_fp4_mqa_logits",
      [opt_view](const TensorDesc& q, const std::optional<TensorDesc>& sfq, const TensorDesc& kv, const TensorDesc& sfkv,
                 const TensorDesc& weights, const TensorDesc& ks, const TensorDesc& ke, const TensorDesc& logits,
                 bool clean, bool compressed) {
        const auto vsq = opt_view(sfq, "sfq");
        dga::fp8_fp4_mqa_logits(view(q, "q"), vsq ? &*vsq : nullptr, view(kv, "kv"), view(sfkv, "sfkv"),
                                view(weights, "weights"), view(ks, "cu_seq_len_k_start"), view(ke, "cu_seq_len_k_end"),
                                view(logits, "logits"), clean, compressed);
      },
      nb::arg("q"), nb::arg("sfq").none(), nb::arg("kv"), nb::arg("sfkv"), nb::arg("weights"), nb::arg("ks"),
      nb::arg("ke"), nb::arg("logits"), nb::arg("clean"), nb::arg("compressed"), Guard());
  m.def(
      "fp8_fp4_paged_mqa_logits",
      [opt_view](const TensorDesc& q, const std::optional<TensorDesc>& sfq, const TensorDesc& kv_cache,
                 const TensorDesc& weights, const TensorDesc& context_lens, const TensorDesc& block_table,
                 const TensorDesc& logits, bool clean, const std::optional<TensorDesc>& indices) {
        const auto vsq = opt_view(sfq, "sfq"), vi = opt_view(indices, "indices");
        dga::fp8_fp4_paged_mqa_logits(view(q, "q"), vsq ? &*vsq : nullptr, view(kv_cache, "kv_cache"),
                                      view(weights, "weights"), view(context_lens, "context_lens"),
                                      view(block_table, "block_table"), view(logits, "logits"), clean,
                                      vi ? &*vi : nullptr);
      },
      nb::arg("q"), nb::arg("sfq").none(), nb::arg("kv_cache"), nb::arg("weights"), nb::arg("context_lens"),
      nb::arg("block_table"), nb::arg("logits"), nb::arg("clean"), nb::arg("indices").none(), Guard());
  m.def(
      "fp8_einsum",
      [](const std::string& expr, const TensorDesc& a, const TensorDesc& sfa, const TensorDesc& b, const TensorDesc& sfb,
         const TensorDesc& d, const std::optional<TensorDesc>& c, const dga::ScaleRecipe& recipe_a,
         const dga::ScaleRecipe& recipe_b) {
        const std::optional<dga::TensorView> vc = c ? std::optional(view(*c, "c")) : std::nullopt;
        dga::fp8_einsum(expr, view(a, "a"), view(sfa, "sfa"), view(b, "b"), view(sfb, "sfb"), view(d, "d"),
                        vc ? &*vc : nullptr, recipe_a, recipe_b);
      },
      nb::arg("expr"), nb::arg("a"), nb::arg("sfa"), nb::arg("b"), nb::arg("sfb"), nb::arg("d"), nb::arg("c").none(),
      nb::arg("recipe_a"), nb::arg("recipe_b"), Guard());
  m.def("get_mk_alignment_for_contiguous_layout", &dga::get_mk_alignment_for_contiguous_layout);
  m.def("set_mk_alignment_for_contiguous_layout", &dga::set_mk_alignment_for_contiguous_layout, nb::arg("alignment"));
  // The cube's fractal layouts (Nz: row-major fractals of a K-major operand; Zn: of its transpose).
  nb::enum_<dga::Fractal>(m, "Fractal").value("nz", dga::Fractal::kNz).value("zn", dga::Fractal::kZn);
  m.def(
      "to_fractal",
      [](dga::Fractal f, const TensorDesc& src, const TensorDesc& dst, int bits) {
        dga::to_fractal(f, view(src, "t"), view(dst, "out"), bits);
      },
      nb::arg("fractal"), nb::arg("t"), nb::arg("out"), nb::arg("bits"), Guard());
  m.def(
      "from_fractal",
      [](dga::Fractal f, const TensorDesc& src, const TensorDesc& dst, int bits) {
        dga::from_fractal(f, view(src, "t"), view(dst, "out"), bits);
      },
      nb::arg("fractal"), nb::arg("t"), nb::arg("out"), nb::arg("bits"), Guard());
  m.def("encode", &encode, Guard());
  m.def("require_ue8m0_values", &require_ue8m0_values, nb::arg("sf"), nb::arg("arg"), nb::arg("layout").none(),
        nb::arg("layout_arg") = "psum_layout", nb::arg("kind") = "psum", Guard());
  m.def("decode", &decode, Guard());
  m.def("get_num_ai_cores", &dga::get_num_ai_cores);
  m.def("set_num_ai_cores", &dga::set_num_ai_cores, nb::arg("num"));
  m.def(
      "set_block_size_multiple_of",
      [](int64_t block_m, int64_t block_n) { dga::heuristics::set_block_size_multiple_of(block_m, block_n); },
      nb::arg("block_m"), nb::arg("block_n"), Guard());
  m.def("get_block_size_multiple_of", [] { return dga::heuristics::block_size_multiple_of(); });
  m.def("set_checked_mode", &dga::runtime::set_checked_mode);
  m.def("set_backend", &dga::runtime::set_backend, nb::arg("name"), Guard());
  m.def("get_backend", &dga::runtime::backend);
  m.def("take_npu_model_launches", &dga::runtime::take_npu_model_launches);
  m.def("checked_mode", &dga::runtime::checked_mode);
  m.def("set_host_isa", [](const std::string& s) { dga::tile::host::set_host_isa(dga::tile::host::parse_host_isa(s)); });
  m.def("reset_host_isa", &dga::tile::host::reset_host_isa);
  m.def("info", &info);
  m.def("npu_rates", &npu_rates);
  m.def(
      "measure_host_peak",
      [](double budget_s) {
        DGA_REQUIRE(budget_s > 0 && budget_s <= 60, kValue, "budget_s", "must be in (0, 60] seconds, got ", budget_s);
        dga::runtime::HostPeak p;
        {
          nb::gil_scoped_release nogil;
          p = dga::runtime::measure_host_peak(budget_s);
        }
        nb::dict d;
        d["isa"] = p.isa;
        d["cores"] = p.cores;
        d["tflops"] = p.tflops;
        d["seconds"] = p.seconds;
        return d;
      },
      nb::arg("budget_s") = 0.2);
  dga::bindings::bind_mega_moe(m);
  dga::bindings::bind_jit(m);
  dga::bindings::bind_legacy(m);
  m.attr("__version__") = dga::version();
}
