// NPU dispatch of the dense BF16 GEMM: argument checks, the Ascend 950 tile config, launch through
// the ACL backend on the stream the caller made current. NOT validated on hardware.
#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/kernel/npu_params.hpp"
#include "deepgemm_ascend/runtime/acl_backend.hpp"
#include "gemm_common.hpp"
#include "validate.hpp"

namespace deepgemm_ascend::api {

using core::DType;

void npu_bf16_gemm(const std::string& lay, const TensorView& a, const TensorView& b, const TensorView& d,
                   const TensorView* c) {
  DGA_REQUIRE(runtime::npu_backend_built(), kRuntime, "a", "is on ", a.device.str(), ", but ",
              runtime::npu_unavailable_reason());
  DGA_REQUIRE(lay == "nt", kNotImplemented, "layout", "the NPU target implements bf16_gemm_nt only so far, got '",
              lay, "'");
  DGA_REQUIRE(c == nullptr, kNotImplemented, "c", "accumulation into C is not implemented on the NPU target yet");
  require_dtype(a, "a", {DType::kBF16});
  require_dtype(b, "b", {DType::kBF16});
  require_dtype(d, "d", {DType::kBF16});
  require_rank(a, "a", 2);
  require_rank(b, "b", 2);
  for (const auto& [arg, t] : {std::pair<const char*, const TensorView*>{"a", &a}, {"b", &b}})
    DGA_REQUIRE(t->stride(1) == 1, kValue, arg, "the NPU kernel reads K-major rows (unit last stride), got strides ",
                t->strides_str());
  const GemmShape s{a.shape[0], b.shape[0], a.shape[1]};
  DGA_REQUIRE(b.shape[1] == s.k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", s.k, " but b ",
              b.shape_str(), " has K=", b.shape[1]);
  validate_output(d, nullptr, s.m, s.n, {{"a", &a}, {"b", &b}});
  if (s.m == 0 || s.n == 0 || s.k == 0) {
    DGA_REQUIRE(s.k != 0 || s.m == 0 || s.n == 0, kNotImplemented, "a", "K == 0 on the NPU target");
    return;
  }
  namespace h = heuristics;
  const int cores = runtime::npu_cube_cores(a.device.index);
  const h::GemmConfig cfg = h::select_gemm_config(h::npu_gemm_desc(s.m, s.n, s.k, 16, 16, 2, cores),
                                                   h::ArchLimits::of<arch::Ascend950>());
  const DgaGemmParams p{uint64_t(uintptr_t(a.ptr())), uint64_t(uintptr_t(b.ptr())), uint64_t(uintptr_t(d.ptr())),
                        s.m, s.n, s.k, a.stride(0), b.stride(0), d.stride(0), cfg.tiling.block_m, cfg.tiling.block_n,
                        cfg.tiling.block_k, cfg.tiling.l0_k, cfg.swizzle.band, cfg.swizzle.along_m};
  runtime::npu_launch(a.device.index, "dga_npu_launch_bf16_gemm_nt", unsigned(cfg.num_blocks),
                      runtime::current_npu_stream(), &p);
}

}  // namespace deepgemm_ascend::api
