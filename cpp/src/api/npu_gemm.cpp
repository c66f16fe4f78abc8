// NPU dispatch of the GEMMs (BF16, and FP8 e4m3 / packed FP4 with UE8M0 MX scales; dense: all four
// layouts, D bf16 or fp32, optional C; M-grouped masked and contiguous): the checks the NPU kernels add
// to the host's, the Ascend 950 tile config, launch on the device (through the ACL backend on the stream
// the caller made current) or on the instruction model (npu_device.hpp). NOT validated on hardware.
#include <algorithm>
#include <string>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
#include "deepgemm_ascend/heuristics/mqa_tiling.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
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
  return device_matrix(arg, layout::MatrixRef{.base = m.base, .origin = m.origin, .rows = m.rows, .cols = m.cols,
                                                      .row_stride = m.row_stride, .col_stride = m.col_stride,
                                                      .bits = m.bits});
}

// The NPU kernel family of a GEMM (its launchers: kernel/npu_gemm_families.hpp), operand bits and scale
// handling.
struct NpuKernel {
  kernel::NpuGemmFamily family = kernel::NpuGemmFamily::bf16;
  int bits = 16;
  bool mx = false;
  int64_t promote_k = 0;  // fp32 block scales: promoted per K block on the vector cores
  // FP8 x FP4: the FP4 operand (a or b) is widened to e4m3 first (the fp8 MX kernel then runs).
  bool widen_a = false, widen_b = false;
};

// Workspace regions start 512 B apart (NpuDevice::workspace's alignment).
constexpr int64_t kWorkspaceAlign = 512;


// FP32 block scales are promoted per K block of their recipe.
constexpr int64_t kPromoteK = kBlockGranK;
// A promoted tile's UB bytes per value on its vector core (npu_promotion.hpp: four fp32 product slots, the
// fp32 accumulator, the bf16 output) in half bytes: plus one fp32 column scale per column, at most half a
// byte per value since a vector core holds at least 8 of the tile's rows. The tile's two fp32 L0C products
// (the cube's spare) then fit too: 8 B a value against the UB's 22.5 B on half the values.
constexpr int64_t kPromotionUbHalfBytesPerValue = 2 * (4 * 4 + 4 + 2) + 1;
// The shortest column run the promotion scales with one scalar (one UB run of fp32).
int64_t scale_run(const heuristics::NpuArch& arch) { return arch.ub_align / int64_t(sizeof(float)); }

DgaScales device_scales(const char* arg, const layout::ScaleRef& s) {
  const auto base = uint64_t(reinterpret_cast<uintptr_t>(s.base));
  if (!s.ue8m0) {  // fp32: strides in floats
    constexpr int64_t kFloat = sizeof(float);
    return {base, s.mn_stride * kFloat, s.k_stride * kFloat, s.gran_mn, 1};
  }
  constexpr int64_t kPairBytes = arch::MxFormat::kMxScalesPerPack;
  DGA_REQUIRE(s.pack == int(arch::MxFormat::kMxScalesPerPack) && s.gran_k == arch::MxFormat::kMxBlockK,
              kNotImplemented, arg, "the NPU kernels take UE8M0 scales of 32 K values packed in int16 pairs ",
              "(the Ascend layout, utils.get_mn_major_packed_ue8m0x2_tensor); gran_k ", s.gran_k,
              " has no NPU kernel yet");
  DGA_REQUIRE(s.mn_stride == kPairBytes || s.k_stride == kPairBytes, kValue, arg,
              "the NPU copies scale pairs that are MN- or K-major (one unit stride), got byte strides (", s.mn_stride,
              ", ", s.k_stride, ")");
  return {base, s.mn_stride, s.k_stride, 1, 0};
}

// FP32 block scales: the mix kernel that promotes on the vector cores.
NpuKernel promoted_kernel(const heuristics::NpuArch& arch, const block::Operands& ops, const block::Scaling& sc) {
  using F = tile::OperandFormat;
  DGA_REQUIRE(!sc.a.ue8m0 && !sc.b.ue8m0, kNotImplemented, sc.a.ue8m0 ? "sfa" : "sfb",
              "the NPU kernels take float32 scales for both operands or UE8M0 for both");
  DGA_REQUIRE(ops.a == F::kE4M3 && ops.b == F::kE4M3, kNotImplemented, "b",
              "FP8 GEMMs with float32 block scales take two float8_e4m3fn operands on the NPU");
  DGA_REQUIRE(sc.a.gran_k == kPromoteK && sc.b.gran_k == kPromoteK, kNotImplemented, "recipe",
              "float32 scales are promoted per ", kPromoteK, " K values on the NPU, got gran_k ", sc.a.gran_k, " / ",
              sc.b.gran_k);
  DGA_REQUIRE(sc.b.gran_mn % scale_run(arch) == 0 || sc.b.gran_mn == 1, kNotImplemented, "recipe",
              "the NPU's vector promotion takes B scales constant over a multiple of ", scale_run(arch),
              " columns or one per column, got gran_n ", sc.b.gran_mn);
  DGA_REQUIRE(sc.b.gran_mn != 1 || sc.b.mn_stride == 1, kValue, "sfb",
              "per-column float32 scales must be MN-major on the NPU (unit stride along N: the vector cores load "
              "a K block's column scales as one run), got strides (", sc.b.mn_stride, ", ", sc.b.k_stride,
              "); utils.get_mn_major_tma_aligned_tensor makes them so");
  return {kernel::NpuGemmFamily::fp8_block, 8, false, kPromoteK};
}

// D = C (or 0) for K == 0: a device copy of C's rows, or the fp32 zero fill (dev null: the checks only).
void npu_empty_k(const NpuDevice* dev, const core::TensorView& d, const core::TensorView* c) {
  DGA_REQUIRE(c != nullptr || d.dtype == DType::kFP32, kNotImplemented, "a",
              "K == 0 with a bfloat16 D and no C on the NPU target");
  DGA_REQUIRE(c == nullptr || c->dtype == d.dtype, kNotImplemented, "c",
              "K == 0 with C and D of different dtypes on the NPU target");
  if (dev == nullptr) return;
  if (c == nullptr) return npu_zero_rows(d);
  if (c->ptr() == d.ptr()) return;
  const size_t item = size_t(core::itemsize(d.dtype));
  dev->copy_rows(d.ptr(), size_t(d.stride(0)) * item, c->ptr(), size_t(c->stride(0)) * item, size_t(d.size(1)) * item,
                 size_t(d.size(0)));
}

// Checks the operands and scales an NPU kernel takes and names its family.
// k_major: both operands have unit stride along K.
NpuKernel npu_kernel(const heuristics::NpuArch& arch, const block::Operands& ops, const block::Scaling& sc, int64_t k,
                     bool k_major = true) {
  using F = tile::OperandFormat;
  if (!sc.enabled) return {kernel::NpuGemmFamily::bf16, 16, false};
  if (!sc.a.ue8m0 || !sc.b.ue8m0) return promoted_kernel(arch, ops, sc);
  const auto mx_operand = [](F f) { return f == F::kE4M3 || f == F::kE2M1; };
  DGA_REQUIRE(mx_operand(ops.a) && mx_operand(ops.b), kNotImplemented, mx_operand(ops.a) ? "b" : "a",
              "the NPU MX kernels take float8_e4m3fn or packed FP4 operands; e5m2 has no NPU kernel yet");
  DGA_REQUIRE(k % arch::MxFormat::kMxBaseK == 0, kNotImplemented, "a", "the 950's MX cube multiplies K in steps of ",
              arch::MxFormat::kMxBaseK, "; K = ", k, " has no NPU kernel yet");
  device_scales("sfa", sc.a);
  device_scales("sfb", sc.b);
  const bool any_fp4 = ops.a == F::kE2M1 || ops.b == F::kE2M1;
  DGA_REQUIRE(!any_fp4 || k_major, kNotImplemented, ops.a == F::kE2M1 ? "a" : "b",
              "packed FP4 operands must be K-major on the NPU (the DMA moves bytes, so MN-packed nibbles cannot "
              "become the cube's K-packed layout)");
  if (ops.a == ops.b)
    return {ops.a == F::kE2M1 ? kernel::NpuGemmFamily::fp4_mx : kernel::NpuGemmFamily::fp8_mx, ops.a == F::kE2M1 ? 4 : 8,
            true};
  // The 950's MX cube pairs fp8 with fp8 and fp4 with fp4: FP8 x FP4 widens the FP4 operand to e4m3 (exact).
  NpuKernel kern{kernel::NpuGemmFamily::fp8_mx, 8, true};
  kern.widen_a = ops.a == F::kE2M1, kern.widen_b = ops.b == F::kE2M1;
  return kern;
}

// The K-major packed FP4 operand m (rows x K values, `groups` groups `group_values` apart) widened to e4m3 in
// `ws` by the vector cores (convert_rows.asc), returned as the e4m3 operand [groups x rows, K] (K-major, groups
// rows x K values apart). dev null: nothing is launched.
layout::MatrixRef widen_fp4(const NpuDevice* dev, const layout::MatrixRef& m, int64_t groups, int64_t group_values,
                            void* ws) {
  const layout::MatrixRef wide{
      .base = ws, .origin = 0, .rows = m.rows, .cols = m.cols, .row_stride = m.cols, .col_stride = 1,
      .bits = core::kFp8Bits};
  if (dev == nullptr || m.rows == 0 || m.cols == 0 || groups == 0) return wide;
  const auto base = uint64_t(reinterpret_cast<uintptr_t>(m.base));
  const auto dst = uint64_t(reinterpret_cast<uintptr_t>(ws));
  const bool one_run = groups == 1 || group_values == m.rows * m.row_stride;  // the groups' rows evenly spaced
  const int64_t launches = one_run ? 1 : groups, rows = one_run ? groups * m.rows : m.rows;
  for (int64_t g = 0; g < launches; ++g) {
    const int64_t origin = m.origin + g * group_values;
    const DgaConvertParams p{{base + uint64_t(origin / 2), rows, m.cols, m.row_stride, 1},
                             {dst + uint64_t(g * m.rows * m.cols), rows, m.cols, m.cols, 1},
                             int32_t(DType::kFP4E2M1x2), int32_t(DType::kFP8E4M3), 0, 0};
    dev->launch("dga_npu_launch_convert_rows", unsigned(dev->vector_cores()), &p, rows * m.cols);
  }
  return wide;
}

// Bytes of the e4m3 copies an FP8 x FP4 kernel needs (a: a_rows x K per group, b: b_rows x K), 512 B aligned.
int64_t widened_bytes(const NpuKernel& kern, int64_t a_values, int64_t b_values) {
  const int64_t v = kern.widen_a ? a_values : kern.widen_b ? b_values : 0;
  return layout::align_up(v, kWorkspaceAlign);
}

// The config of a launch on `arch` (the launch's device's: NpuDevice::arch).
// Grouped GEMMs: `groups` groups of m expected rows each.
// second_b: each tile also multiplies A by a second B (GemmProblem::b2).
heuristics::GemmConfig npu_config(const heuristics::NpuArch& arch, int64_t m, int64_t n, int64_t k, int d_bytes,
                                  int cores, const NpuKernel& kern, int64_t groups = 1, bool second_b = false) {
  namespace h = heuristics;
  h::GemmDesc desc = h::npu_gemm_desc(m, n, k, kern.bits, kern.bits, d_bytes, cores, kern.mx);
  desc.promote_k = kern.promote_k;
  desc.groups = groups;
  desc.second_b = second_b;
  if (kern.promote_k > 0)
    desc.max_tile_values = arch.ub_bytes * 2 * arch.vector_cores_per_cube / kPromotionUbHalfBytesPerValue;
  const h::GemmConfig cfg = h::select_gemm_config(desc, arch.limits);
  print_gemm_config(kernel::npu_gemm_family(kern.family).name, desc, cfg);  // DG_PRINT_CONFIGS
  return cfg;
}

DgaGemmParams gemm_params(const layout::MatrixRef& a, const layout::MatrixRef& b, const layout::MutMatrixRef& d,
                          const block::Scaling& sc, core::DType d_dtype, bool has_c, const heuristics::GemmConfig& cfg) {
  const DgaScales none{0, 0, 0, 0, 0};
  return {device_matrix("a", a), device_matrix("b", b), device_matrix("d", d),
          sc.enabled ? device_scales("sfa", sc.a) : none, sc.enabled ? device_scales("sfb", sc.b) : none,
          int32_t(d_dtype), has_c ? 1 : 0, cfg.tiling.block_m, cfg.tiling.block_n, cfg.tiling.block_k,
          cfg.tiling.l0_k, cfg.swizzle.band, cfg.swizzle.along_m ? 1 : 0, sc.enabled && !sc.a.ue8m0 ? kPromoteK : 0};
}

}  // namespace

void npu_contiguous_gemm(const kernel::ContiguousProblems<kernel::HostRows>& problems, const block::Operands& ops,
                         bool psum, const core::TensorView& grouped_layout, const core::TensorView& d) {
  const NpuDevice dev(d, "d");
  const NpuKernel kern =
      npu_kernel(dev.arch(), ops, problems.scaling, problems.a.cols,
                 problems.a.col_stride == 1 && problems.b.col_stride == 1);
  if (problems.a.rows == 0) return;
  const int cores = dev.cube_cores();
  // The groups' sizes are only known to the kernel: plan for groups of the mean rows (the rows are padded per
  // group to the alignment, so a tile of at most the mean rows wastes little on the groups' tails).
  const int64_t mean_rows = layout::align_up(layout::ceil_div(problems.a.rows, problems.groups), problems.align);
  const heuristics::GemmConfig cfg =
      npu_config(dev.arch(), mean_rows, problems.b.rows, problems.a.cols, 2, cores, kern, problems.groups);
  const int64_t k = problems.a.cols;
  const int64_t wide = widened_bytes(kern, problems.a.rows * k, problems.groups * problems.b.rows * k);
  void* ws = wide > 0 ? dev.workspace(size_t(wide)) : nullptr;
  const layout::MatrixRef a = kern.widen_a ? widen_fp4(&dev, problems.a, 1, 0, ws) : problems.a;
  const layout::MatrixRef b =
      kern.widen_b ? widen_fp4(&dev, problems.b, problems.groups, problems.b_group, ws) : problems.b;
  const int64_t b_group = kern.widen_b ? problems.b.rows * k : problems.b_group;
  const DgaContiguousGemmParams p{gemm_params(a, b, problems.e.d, problems.scaling, d.dtype, false, cfg),
                                  b_group, problems.groups, problems.align, problems.sfb_group,
                                  uint64_t(reinterpret_cast<uintptr_t>(grouped_layout.ptr())), psum ? 1 : 0};
  dev.launch_gemm(unsigned(cores), &p, cfg.tiling, kern.family, kernel::NpuGemmKind::contiguous,
                  problems.a.rows * problems.b.rows * problems.a.cols);
}

void npu_masked_gemm(const kernel::MaskedProblems<kernel::HostRows>& problems, const block::Operands& ops,
                     const core::TensorView* masked_m, const core::TensorView& d, int64_t expected_m) {
  const NpuDevice dev(d, "d");
  const NpuKernel kern =
      npu_kernel(dev.arch(), ops, problems.scaling, problems.a.cols,
                 problems.a.col_stride == 1 && problems.b.col_stride == 1);
  if (problems.groups == 0 || problems.a.rows == 0 || problems.b.rows == 0) return;
  DGA_REQUIRE(problems.a.cols != 0, kNotImplemented, "a", "K == 0 on the NPU target");
  const int cores = dev.cube_cores();
  // The tiles depend on masked_m, which only the kernel reads: every core takes part.
  const heuristics::GemmConfig cfg =
      npu_config(dev.arch(), expected_m, problems.b.rows, problems.a.cols, int(core::itemsize(d.dtype)), cores, kern,
                 problems.groups);
  const int64_t k = problems.a.cols, g = problems.groups;
  void* ws = kern.widen_a || kern.widen_b
                 ? dev.workspace(size_t(widened_bytes(kern, g * problems.a.rows * k, g * problems.b.rows * k)))
                 : nullptr;
  const layout::MatrixRef a = kern.widen_a ? widen_fp4(&dev, problems.a, g, problems.a_group, ws) : problems.a;
  const layout::MatrixRef b = kern.widen_b ? widen_fp4(&dev, problems.b, g, problems.b_group, ws) : problems.b;
  const int64_t a_group = kern.widen_a ? problems.a.rows * k : problems.a_group;
  const int64_t b_group = kern.widen_b ? problems.b.rows * k : problems.b_group;
  const DgaMaskedGemmParams p{gemm_params(a, b, problems.e.d, problems.scaling, d.dtype, false, cfg),
                              a_group,            b_group,            problems.d_group,
                              problems.groups,    problems.sfa_group, problems.sfb_group,
                              masked_m ? uint64_t(reinterpret_cast<uintptr_t>(masked_m->ptr())) : 0};
  dev.launch_gemm(unsigned(cores), &p, cfg.tiling, kern.family, kernel::NpuGemmKind::masked,
                  problems.groups * problems.a.rows * problems.b.rows * problems.a.cols);
}

namespace {
// A K-grouped launch over `problems` (C already in D): its parameters, config and kernel.
struct KGroupedLaunch {
  DgaKGroupedGemmParams p;
  heuristics::GemmConfig cfg;
  NpuKernel kern;
};
// fill_cores: smaller M tiles while that gives every cube core one (the HC launch, HBM-bound, whose vector
// cores read A beside the cube cores: a core left idle leaves its share of the reads to the others).
KGroupedLaunch k_grouped_launch(const NpuDevice& dev, const kernel::KGroupedProblems<kernel::HostRows>& problems,
                                const block::Operands& ops, const core::TensorView& ends, const core::TensorView& d,
                                bool fill_cores = false) {
  const NpuKernel kern = npu_kernel(dev.arch(), ops, problems.scaling, problems.align);
  DGA_REQUIRE(kern.family != kernel::NpuGemmFamily::fp4_mx && !kern.widen_a && !kern.widen_b, kNotImplemented, "a",
              "K-grouped GEMMs with FP4 operands have no NPU kernel");
  const int64_t m = problems.a.rows, n = problems.b.rows;
  // The groups' K sizes are only known to the kernel: plan for the mean.
  heuristics::GemmConfig cfg =
      npu_config(dev.arch(), m, n, std::max<int64_t>(problems.a.cols / problems.groups, problems.align), 4,
                 dev.cube_cores(), kern, 1, problems.b2.base != nullptr);
  auto& t = cfg.tiling;
  while (fill_cores && t.block_m > 2 * layout::kFractalRows &&
         layout::ceil_div(m, t.block_m / 2) * layout::ceil_div(n, t.block_n) <= dev.cube_cores())
    t.block_m /= 2;
  const DgaMatrix none{0, 0, 0, 0, 0};
  const DgaKGroupedGemmParams p{gemm_params(problems.a, problems.b, problems.e.d, problems.scaling, d.dtype, true, cfg),
                                problems.d_group, problems.groups, problems.align,
                                uint64_t(reinterpret_cast<uintptr_t>(ends.ptr())),
                                problems.b2.base != nullptr ? device_matrix("b", problems.b2) : none};
  return {p, cfg, kern};
}
}  // namespace

void npu_k_grouped_gemm(const kernel::KGroupedProblems<kernel::HostRows>& problems, const block::Operands& ops,
                        const core::TensorView& ends, const core::TensorView& d, const core::TensorView& c) {
  const NpuDevice dev(d, "d");
  const int64_t m = problems.a.rows, n = problems.b.rows;
  if (c.ptr() != d.ptr()) {  // D = C first, then every group's product is added to D[g]
    constexpr size_t kItem = sizeof(float);
    dev.copy_rows(d.ptr(), size_t(d.stride(1)) * kItem, c.ptr(), size_t(c.stride(1)) * kItem, size_t(n) * kItem,
                  size_t(problems.groups * m));
  }
  if (m == 0 || n == 0 || problems.a.cols == 0) return;
  const KGroupedLaunch l = k_grouped_launch(dev, problems, ops, ends, d);
  dev.launch_gemm(unsigned(dev.cube_cores()), &l.p, l.cfg.tiling, l.kern.family, kernel::NpuGemmKind::k_grouped,
                  m * n * problems.a.cols);
}

void npu_hc_prenorm_gemm(const kernel::KGroupedProblems<kernel::HostRows>& problems, const core::TensorView& ends,
                         const core::TensorView& d, const DgaHcPrenormParams& hc) {
  const NpuDevice dev(d, "d");
  const int64_t m = problems.a.rows, n = problems.b.rows, k = problems.a.cols;
  if (m == 0) return;
  const DgaHcGemmParams p{k_grouped_launch(dev, problems, {}, ends, d, true).p, hc};
  dev.launch("dga_npu_launch_hc_prenorm_gemm", unsigned(dev.cube_cores()), &p, 2 * m * n * k + m * k);
}

void npu_convert_rows(const core::TensorView& src, const core::TensorView& dst) {
  const NpuDevice dev(dst, "d");
  const int64_t rows = src.size(0), cols = src.size(1);
  if (rows == 0 || cols == 0) return;
  const auto matrix = [&](const core::TensorView& t) {
    return DgaMatrix{uint64_t(reinterpret_cast<uintptr_t>(t.ptr())), rows, cols, t.stride(0), 1};
  };
  const DgaConvertParams p{matrix(src), matrix(dst), int32_t(src.dtype), int32_t(dst.dtype), 0, 0};
  dev.launch("dga_npu_launch_convert_rows", unsigned(dev.vector_cores()), &p, rows * cols);
}

void npu_zero_rows(const core::TensorView& dst, const core::TensorView* lens, const core::TensorView* starts) {
  const NpuDevice dev(dst, "d");
  const int64_t rows = dst.size(0), cols = dst.size(1);
  if (rows == 0 || cols == 0) return;
  const DgaConvertParams p{{0, rows, cols, cols, 1},
                           {uint64_t(reinterpret_cast<uintptr_t>(dst.ptr())), rows, cols, dst.stride(0), 1},
                           int32_t(DType::kFP32),
                           int32_t(DType::kFP32),
                           lens != nullptr ? uint64_t(reinterpret_cast<uintptr_t>(lens->ptr())) : 0,
                           starts != nullptr ? uint64_t(reinterpret_cast<uintptr_t>(starts->ptr())) : 0};
  dev.launch("dga_npu_launch_convert_rows", unsigned(dev.vector_cores()), &p, rows * cols);
}

// MQA operands: q rows and KV rows of `dim` values (FP8, or packed FP4 with the UE8M0 scales of its rows:
// one int32 of four scales per row, read as two K-major int16 pairs by the MX cube).
struct MqaOperands {
  layout::MatrixRef q, kv;
  block::Scaling scaling;
  const char* family;  // launcher suffix
};

MqaOperands mqa_operands(const core::TensorView& q, int64_t q_rows, const core::TensorView& kv, int64_t kv_rows,
                         int64_t dim, const void* sfq, const void* sfkv) {
  const bool fp4 = sfq != nullptr;
  const int bits = fp4 ? 4 : 8, per = fp4 ? 2 : 1;
  constexpr int64_t kRowBytes = 4, kPairBytes = arch::MxFormat::kMxScalesPerPack;
  const auto rows = [&](const void* base) {
    return layout::ScaleRef{base, true, int(kPairBytes), kRowBytes, kPairBytes, 1, arch::MxFormat::kMxBlockK};
  };
  MqaOperands o{{q.data, q.offset * per, q_rows, dim, dim, 1, bits},
                {kv.data, kv.offset * per, kv_rows, dim, dim, 1, bits},
                {},
                fp4 ? "fp4" : "fp8"};
  if (fp4) o.scaling = {true, rows(sfq), rows(sfkv)};
  return o;
}

void npu_mqa_logits(const NpuMqa& m) {
  const NpuDevice dev(*m.logits, "logits");
  const int64_t s = m.q->size(0), heads = m.q->size(1), dim = m.q->size(2) * (m.sfq ? 2 : 1), skv = m.kv->size(0);
  // Compressed mode: one query per tile (each query's logits start at its own first KV row).
  const heuristics::GemmConfig cfg = heuristics::npu_mqa_config(heads, dim, m.compressed > 0 ? 1 : s);
  const int64_t block_m = cfg.tiling.block_m, block_n = cfg.tiling.block_n;
  const bool fp4 = m.sfq != nullptr;
  const MqaOperands o = mqa_operands(*m.q, s * heads, *m.kv, skv, dim, fp4 ? m.sfq->ptr() : nullptr,
                                     m.kv_scale->ptr());
  const layout::MutMatrixRef none{.bits = core::kFp32Bits};
  // Compressed: one problem per query, at most `compressed` KV rows each.
  const int64_t tiles = m.compressed > 0
                            ? s * layout::ceil_div(std::min(skv, m.compressed), block_n)
                            : layout::ceil_div(s * heads, block_m) * layout::ceil_div(skv, block_n);
  // FP4: the cube applies the KV scales (kv_scale 0: none on the vector cores).
  DgaMqaParams p{gemm_params(o.q, o.kv, none, o.scaling, DType::kFP32, false, cfg),
                 addr(m.weights->ptr()),
                 addr(m.ks->ptr()),
                 addr(m.ke->ptr()),
                 fp4 ? 0 : addr(m.kv_scale->ptr()),
                 addr(m.acc->ptr()),
                 m.weights->stride(0),
                 m.acc->stride(0),
                 heads,
                 m.compressed};
  dev.launch(std::string("dga_npu_launch_mqa_logits_") + o.family,
             unsigned(std::min<int64_t>(dev.cube_cores(), tiles)), &p, s * heads * skv * dim);
}

void npu_paged_mqa_logits(const NpuPagedMqa& m) {
  const NpuDevice dev(*m.acc, "logits");
  const bool fp4 = m.sfq != nullptr;
  const int64_t batch = m.q->size(0), next_n = m.q->size(1), heads = m.q->size(2), dim = m.q->size(3) * (fp4 ? 2 : 1);
  const int64_t block_kv = m.kv_cache->size(1), width = m.acc->size(1), row_bytes = m.q->size(3);
  const heuristics::GemmConfig cfg = heuristics::npu_paged_mqa_config(heads, next_n, block_kv, dim);
  // Request 0's query rows and block 0's KV rows; a block's row scales follow its rows.
  const auto* block0 = static_cast<const uint8_t*>(m.kv_cache->ptr());
  const MqaOperands o = mqa_operands(*m.q, next_n * heads, *m.kv_cache, block_kv, dim, fp4 ? m.sfq->ptr() : nullptr,
                                     block0 + block_kv * row_bytes);
  const layout::MutMatrixRef none{.bits = core::kFp32Bits};
  const int64_t pages = std::min(layout::ceil_div(width, block_kv), m.block_table->size(1));
  const DgaMqaParams mqa{gemm_params(o.q, o.kv, none, o.scaling, DType::kFP32, false, cfg), addr(m.weights->ptr()),
                         0, 0, 0, addr(m.acc->ptr()), m.weights->stride(0), m.acc->stride(0), heads, 0};
  const DgaPagedMqaParams p{mqa,     addr(m.context_lens->ptr()), addr(m.block_table->ptr()), batch, next_n, pages,
                            width,   m.kv_cache->size(0),         m.block_table->stride(0),   m.kv_cache->stride(0)};
  const int64_t tiles = batch * pages * layout::ceil_div(next_n * heads, cfg.tiling.block_m);
  if (tiles == 0) return;
  dev.launch(std::string("dga_npu_launch_paged_mqa_logits_") + o.family,
             unsigned(std::min<int64_t>(dev.cube_cores(), tiles)), &p, batch * next_n * heads * width * dim);
}

namespace {

// An fp32 [rows, cols] row-major view of device memory at `data`, on the device of `like`.
core::TensorView fp32_view(const core::TensorView& like, void* data, int64_t rows, int64_t cols) {
  core::TensorView w = like;
  w.data = data;
  w.offset = 0, w.dtype = DType::kFP32, w.ndim = 2;
  w.shape[0] = rows, w.shape[1] = cols, w.strides[0] = cols, w.strides[1] = 1;
  return w;
}

// One dense launch (K > 0; D fp32, or no C).
void launch_dense(const NpuDevice& dev, const NpuKernel& kern, const GemmShape& s, const kernel::GemmProblem& problem,
                  const core::TensorView& d, const core::TensorView* c) {
  const heuristics::GemmConfig cfg =
      npu_config(dev.arch(), s.m, s.n, s.k, int(core::itemsize(d.dtype)), dev.cube_cores(), kern);
  const DgaGemmParams p =
      gemm_params(problem.a, problem.b, problem.epilogue.d, problem.scaling, d.dtype, c != nullptr, cfg);
  if (c != nullptr && c->ptr() != d.ptr()) {  // upstream: D is first overwritten with C, then accumulated into
    const size_t item = size_t(core::itemsize(d.dtype));
    dev.copy_rows(d.ptr(), size_t(d.stride(0)) * item, c->ptr(), size_t(c->stride(0)) * item, size_t(s.n) * item,
                  size_t(s.m));
  }
  dev.launch_gemm(unsigned(cfg.num_blocks), &p, cfg.tiling, kern.family, kernel::NpuGemmKind::dense, s.m * s.n * s.k);
}

}  // namespace

layout::MatrixRef npu_widen_fp4(const core::TensorView& like, const layout::MatrixRef& m, int64_t groups,
                                int64_t group_values, void* ws) {
  const NpuDevice dev(like, "d");
  return widen_fp4(&dev, m, groups, group_values, ws);
}

core::TensorView npu_fp32_workspace(const core::TensorView& like, int64_t rows, int64_t cols) {
  const NpuDevice dev(like, "d");
  return fp32_view(like, dev.workspace(size_t(rows * cols) * sizeof(float)), rows, cols);
}

void npu_gemm_check(const GemmShape& s, const kernel::GemmProblem& problem, const block::Operands& ops,
                    const core::TensorView& d, const core::TensorView* c) {
  const NpuDevice dev(d, "d");
  npu_kernel(dev.arch(), ops, problem.scaling, s.k, problem.a.col_stride == 1 && problem.b.col_stride == 1);
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) return npu_empty_k(nullptr, d, c);
  device_matrix("a", problem.a);
  device_matrix("b", problem.b);
  if (problem.scaling.enabled) device_scales("sfa", problem.scaling.a), device_scales("sfb", problem.scaling.b);
}

void npu_gemm(const GemmShape& s, const kernel::GemmProblem& problem, const block::Operands& ops,
              const core::TensorView& d, const core::TensorView* c) {
  const NpuDevice dev(d, "d");
  const NpuKernel kern =
      npu_kernel(dev.arch(), ops, problem.scaling, s.k, problem.a.col_stride == 1 && problem.b.col_stride == 1);
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) return npu_empty_k(&dev, d, c);
  // One workspace: the e4m3 copy of an FP4 operand (FP8 x FP4), then the fp32 sum of a bf16 D with C.
  const bool via_f32 = c != nullptr && d.dtype != DType::kFP32;
  const int64_t wide = widened_bytes(kern, s.m * s.k, s.n * s.k);
  const int64_t sum_bytes = via_f32 ? s.m * s.n * int64_t(sizeof(float)) : 0;
  auto* ws = wide + sum_bytes > 0 ? static_cast<uint8_t*>(dev.workspace(size_t(wide + sum_bytes))) : nullptr;
  kernel::GemmProblem p = problem;
  if (kern.widen_a) p.a = widen_fp4(&dev, problem.a, 1, 0, ws);
  if (kern.widen_b) p.b = widen_fp4(&dev, problem.b, 1, 0, ws);
  if (!via_f32) return launch_dense(dev, kern, s, p, d, c);
  // D = bf16(f32(C) + A @ B^T): one fp32 sum, rounded once.
  const core::TensorView w = fp32_view(d, ws + wide, s.m, s.n);
  npu_convert_rows(*c, w);
  p.epilogue.d = {w.data, 0, s.m, s.n, s.n, 1, 32};
  launch_dense(dev, kern, s, p, w, &w);
  npu_convert_rows(w, d);
}

}  // namespace deepgemm_ascend::api
