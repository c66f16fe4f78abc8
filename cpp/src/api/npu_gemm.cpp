// NPU dispatch of the BF16 GEMMs (dense: all four layouts, D bf16 or fp32, optional C; M-grouped
// masked and contiguous): the checks the NPU kernels add to the host's, the Ascend 950 tile config, launch through the
// ACL backend on the stream the caller made current. NOT validated on hardware.
#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/jit/npu_gemm_jit.hpp"
#include "deepgemm_ascend/kernel/npu_params.hpp"
#include "deepgemm_ascend/runtime/acl_backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "gemm_common.hpp"
#include "validate.hpp"

namespace deepgemm_ascend::api {

using core::DType;

namespace {

// The ND -> Nz copy takes the leading dimension of a K-major tile as a 16-bit count (ISA DataCopy).
constexpr int64_t kMaxNdLeadingDim = 65535;

DgaMatrix device_matrix(const char* arg, const layout::MatrixRef& m) {
  DGA_REQUIRE(m.col_stride == 1 || m.row_stride == 1, kValue, arg,
              "the NPU kernel reads K-major or MN-major operands (one unit stride), got strides (", m.row_stride,
              ", ", m.col_stride, ")");
  DGA_REQUIRE(m.col_stride != 1 || m.row_stride <= kMaxNdLeadingDim, kValue, arg, "a K-major leading dimension of ",
              m.row_stride, " exceeds the ", kMaxNdLeadingDim, " the NPU's ND->Nz copy takes");
  const auto base = uint64_t(reinterpret_cast<uintptr_t>(m.base)) + uint64_t(m.origin) * uint64_t(m.bits) / 8;
  return {base, m.rows, m.cols, m.row_stride, m.col_stride};
}

DgaMatrix device_matrix(const char* arg, const layout::MutMatrixRef& m) {
  return device_matrix(arg, layout::MatrixRef{m.base, m.origin, m.rows, m.cols, m.row_stride, m.col_stride, m.bits});
}

heuristics::GemmConfig npu_config(int64_t m, int64_t n, int64_t k, int d_bytes, int cores) {
  namespace h = heuristics;
  return h::select_gemm_config(h::npu_gemm_desc(m, n, k, 16, 16, d_bytes, cores), h::ArchLimits::of<arch::Ascend950>());
}

void require_npu(const core::TensorView& t, const char* arg) {
  DGA_REQUIRE(runtime::npu_backend_built(), kRuntime, arg, "is on ", t.device.str(), ", but ",
              runtime::npu_unavailable_reason());
}

}  // namespace

void npu_contiguous_bf16_gemm(const kernel::ContiguousProblems<kernel::HostRows>& problems, bool psum,
                              const core::TensorView& grouped_layout, const core::TensorView& d) {
  require_npu(d, "d");
  if (problems.a.rows == 0) return;
  const int device = d.device.index;
  const int cores = runtime::npu_cube_cores(device);
  // The groups' sizes are only known to the kernel: plan for chunks of the alignment.
  const heuristics::GemmConfig cfg = npu_config(problems.align, problems.b.rows, problems.a.cols, 2, cores);
  const DgaGemmParams g{device_matrix("a", problems.a), device_matrix("b", problems.b),
                        device_matrix("d", problems.e.d), int32_t(d.dtype), 0, cfg.tiling.block_m,
                        cfg.tiling.block_n, cfg.tiling.block_k, cfg.tiling.l0_k, cfg.swizzle.band,
                        cfg.swizzle.along_m ? 1 : 0};
  const DgaContiguousGemmParams p{g, problems.b_group, problems.groups, problems.align,
                                  uint64_t(reinterpret_cast<uintptr_t>(grouped_layout.ptr())), psum ? 1 : 0};
  runtime::npu_launch(device, "dga_npu_launch_gemm_bf16_contiguous", unsigned(cores), runtime::current_npu_stream(),
                      &p);
}

void npu_masked_bf16_gemm(const kernel::MaskedProblems<kernel::HostRows>& problems, bool scaled,
                          const core::TensorView& masked_m, const core::TensorView& d, int64_t expected_m) {
  require_npu(d, "d");
  DGA_REQUIRE(!scaled, kNotImplemented, "a", "FP8/FP4 masked grouped GEMMs have no NPU kernel yet");
  if (problems.groups == 0 || problems.a.rows == 0 || problems.b.rows == 0) return;
  DGA_REQUIRE(problems.a.cols != 0, kNotImplemented, "a", "K == 0 on the NPU target");
  const int device = d.device.index;
  const int cores = runtime::npu_cube_cores(device);
  // The tiles depend on masked_m, which only the kernel reads: every core takes part.
  const heuristics::GemmConfig cfg = npu_config(expected_m, problems.b.rows, problems.a.cols, 2, cores);
  const DgaGemmParams g{device_matrix("a", problems.a), device_matrix("b", problems.b),
                        device_matrix("d", problems.e.d), int32_t(d.dtype), 0, cfg.tiling.block_m,
                        cfg.tiling.block_n, cfg.tiling.block_k, cfg.tiling.l0_k, cfg.swizzle.band,
                        cfg.swizzle.along_m ? 1 : 0};
  const DgaMaskedGemmParams p{g, problems.a_group, problems.b_group, problems.d_group, problems.groups,
                              uint64_t(reinterpret_cast<uintptr_t>(masked_m.ptr()))};
  runtime::npu_launch(device, "dga_npu_launch_gemm_bf16_masked", unsigned(cores), runtime::current_npu_stream(), &p);
}

void npu_bf16_gemm(const GemmShape& s, const kernel::GemmProblem& problem, const core::TensorView& d,
                   const core::TensorView* c) {
  require_npu(d, "d");
  if (s.m == 0 || s.n == 0) return;
  DGA_REQUIRE(s.k != 0, kNotImplemented, "a", "K == 0 on the NPU target");
  DGA_REQUIRE(c == nullptr || d.dtype == DType::kFP32, kValue, "d",
              "accumulating C on the NPU target needs an fp32 D (the tile is added to D in fp32), got ",
              core::name(d.dtype));
  const DgaMatrix da = device_matrix("a", problem.a), db = device_matrix("b", problem.b);
  const DgaMatrix dd = device_matrix("d", problem.epilogue.d);
  const int device = d.device.index;
  const heuristics::GemmConfig cfg = npu_config(s.m, s.n, s.k, int(core::itemsize(d.dtype)), runtime::npu_cube_cores(device));
  void* stream = runtime::current_npu_stream();
  if (c != nullptr && c->ptr() != d.ptr()) {  // upstream: D is first overwritten with C, then accumulated into
    const size_t item = size_t(core::itemsize(d.dtype));
    runtime::npu_copy_rows_async(device, d.ptr(), size_t(d.stride(0)) * item, c->ptr(), size_t(c->stride(0)) * item,
                                 size_t(s.n) * item, size_t(s.m), stream);
  }
  const DgaGemmParams p{da, db, dd, int32_t(d.dtype), c != nullptr ? 1 : 0, cfg.tiling.block_m, cfg.tiling.block_n,
                        cfg.tiling.block_k, cfg.tiling.l0_k, cfg.swizzle.band, cfg.swizzle.along_m ? 1 : 0};
  if (runtime::jit_gemm()) return jit::launch_npu_gemm(device, unsigned(cfg.num_blocks), stream, p, cfg.tiling);
  runtime::npu_launch(device, "dga_npu_launch_gemm_bf16", unsigned(cfg.num_blocks), stream, &p);
}

}  // namespace deepgemm_ascend::api
