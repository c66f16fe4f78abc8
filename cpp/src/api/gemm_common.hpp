// Pieces shared by the GEMM entry points: operand views, output checks, trivial cases, launch.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/tensor_view.hpp"
#include "deepgemm_ascend/heuristics/gemm_config.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/host/host_target.hpp"

namespace deepgemm_ascend::api {

// The K block of the FP32 block-scale recipes ((1, 128, 128) and (1, 1, 128)).
inline constexpr int64_t kBlockGranK = 128;

struct GemmShape {
  int64_t m, n, k;
};

void require_gemm_layout(const std::string& layout);

// t[i] for a tensor with a leading (group / split) dimension: a view with one dimension less.
core::TensorView index_leading(const core::TensorView& t, int64_t i);

// A strided 2-D view as a matrix of `bits`-bit values; packed 4-bit tensors count nibbles.
layout::MatrixRef matrix(const core::TensorView& t, int bits, bool transpose);
layout::MutMatrixRef mut_matrix(const core::TensorView& t);

// D [m, n] bf16 / fp32, row-major, not overlapping any input; C like D (or D itself).
void validate_output(const core::TensorView& d, const core::TensorView* c, int64_t m, int64_t n,
                     std::initializer_list<std::pair<const char*, const core::TensorView*>> inputs);

// M == 0 or N == 0: nothing; K == 0: D = C or 0. Returns true when the call is complete.
bool trivial_gemm(const GemmShape& s, const core::TensorView& d, const core::TensorView* c);

// Epilogue arguments for D (+ C).
block::EpilogueArgs epilogue(const core::TensorView& d, const core::TensorView* c);

// A quantised operand: its format and the logical size of the stored tensor (packed axis doubled).
struct Operand {
  tile::OperandFormat fmt;
  int64_t rows, cols;
};
Operand operand(const core::TensorView& t, const char* arg);  // 2-D fp8 or packed fp4

void check_recipe(const ScaleRecipe& r, const char* arg);
// Validates a 2-D scale tensor for `mn` rows and K = k, and describes it for the kernel.
layout::ScaleRef scales(const core::TensorView& sf, const char* arg, int64_t mn, int64_t k, const ScaleRecipe& r);

// Host scaled GEMMs: whether every scale that `p` reads (p.a's rows, p.b's rows, K = p.a.cols) is an exact power
// of two that folds into the widened operands (layout/scale_fold.hpp); false for an unscaled problem.
bool scales_fold(const kernel::GemmProblem& p);
// Marks each problem folded (block::Scaling::fold) whose own scales fold; returns whether all do (then the
// launch takes promote_k 0; otherwise it promotes at the scales' K granularity, and the folded problems among
// them still fold). A problem's result depends on its own scales only, never on the other problems'.
bool fold_scales(std::vector<kernel::GemmProblem>& problems);

// MQA logits: UE8M0 scales of 32 values, one int32 (4 bytes) per row.
layout::ScaleRef ue8m0_rows(const void* base);

// NPU target: `src` [rows, cols] converted into `dst` (fp32 <-> bf16, row-major rows) on the vector cores.
void npu_convert_rows(const core::TensorView& src, const core::TensorView& dst);
// NPU target: an fp32 [rows, cols] matrix (row-major rows) zeroed on the vector cores; with `lens` (int32
// [rows], contiguous, read on the device) its columns c >= lens[r] are -inf instead, with `starts` (the same)
// its columns c < starts[r] too.
void npu_zero_rows(const core::TensorView& dst, const core::TensorView* lens = nullptr,
                   const core::TensorView* starts = nullptr);
// NPU target: FP8 MQA logits (mqa_logits.asc) added onto `acc` (fp32 [S, SKV] rows, zeroed by the caller):
// q fp8 [S, H, D], kv fp8 [SKV, D] with kv_scale fp32 [SKV], weights fp32 [S, H], ks / ke int32 [S].
// FP4: q and kv packed e2m1 with sfq / kv_scale the rows' UE8M0 scales (int32 of four per row).
// compressed > 0 (max_seqlen_k): acc is [S, compressed] and row i gets the columns [ks[i], ke[i]) at 0.
struct NpuMqa {
  const core::TensorView *q, *kv, *kv_scale, *weights, *ks, *ke, *acc, *logits;
  const core::TensorView* sfq = nullptr;
  int64_t compressed = 0;
};
void npu_mqa_logits(const NpuMqa& m);
// NPU target: paged FP8 MQA logits (mqa_logits.asc) added onto `acc` (fp32 [B * next_n, width] rows, zeroed
// below each row's context length by the caller): q fp8 [B, next_n, H, D], kv_cache uint8 [num_blocks,
// block_kv, 1, D + 4], weights fp32 [B * next_n, H], context_lens / block_table int32 (read on the device).
struct NpuPagedMqa {
  const core::TensorView *q, *kv_cache, *weights, *context_lens, *block_table, *acc;
  const core::TensorView* sfq = nullptr;  // FP4: q packed e2m1, the cache's rows too, UE8M0 row scales
};
void npu_paged_mqa_logits(const NpuPagedMqa& m);
// NPU target: the K-major packed FP4 operand `m` (`groups` groups `group_values` values apart) widened to
// e4m3 in device memory `ws` (groups x rows x K bytes) on the vector cores of `like`'s device; returns the
// e4m3 operand (group g at g x rows x K values).
layout::MatrixRef npu_widen_fp4(const core::TensorView& like, const layout::MatrixRef& m, int64_t groups,
                                int64_t group_values, void* ws);
// NPU target: an fp32 [rows, cols] row-major view of the device workspace of `like`'s device (valid until
// the next workspace request of this thread's stream: one per call).
core::TensorView npu_fp32_workspace(const core::TensorView& like, int64_t rows, int64_t cols);
// A row-major fp32 [rows, cols] view of `t` (e.g. that workspace) starting `offset` values in.
// The address of host or device memory as the launch parameters (kernel/launch_abi.hpp) carry it.
inline uint64_t addr(const void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); }

inline core::TensorView fp32_rows(core::TensorView t, int64_t offset, int64_t rows, int64_t cols) {
  t.offset = offset, t.ndim = 2, t.shape[0] = rows, t.shape[1] = cols, t.strides[0] = cols, t.strides[1] = 1;
  return t;
}

// GEMMs of NPU tensors on the ACL backend (the validated problems; on the current NPU stream): BF16, or
// FP8 / FP4 with UE8M0 MX scales (problem.scaling; anything else raises NotImplementedError).
void npu_gemm(const GemmShape& s, const kernel::GemmProblem& problem, const block::Operands& ops,
              const core::TensorView& d, const core::TensorView* c);
// The checks of npu_gemm alone (nothing launched): for callers that launch several GEMMs and must raise
// before the first one writes.
void npu_gemm_check(const GemmShape& s, const kernel::GemmProblem& problem, const block::Operands& ops,
                    const core::TensorView& d, const core::TensorView* c);
// M-grouped contiguous: `problems` carries the operands, scales and the alignment, its ids the address of
// grouped_layout (per-row ids, or end offsets with `psum`), which the kernel reads.
void npu_contiguous_gemm(const kernel::ContiguousProblems<kernel::HostRows>& problems, const block::Operands& ops,
                         bool psum, const core::TensorView& grouped_layout, const core::TensorView& d);
// M-grouped masked (masked_m is read by the kernel; null: every group has all M rows, a batched GEMM).
void npu_masked_gemm(const kernel::MaskedProblems<kernel::HostRows>& problems, const block::Operands& ops,
                     const core::TensorView* masked_m, const core::TensorView& d, int64_t expected_m);

// K-grouped (C copied into D first unless it is D; `ends`: the groups' int32 end offsets on the device).
void npu_k_grouped_gemm(const kernel::KGroupedProblems<kernel::HostRows>& problems, const block::Operands& ops,
                        const core::TensorView& ends, const core::TensorView& d, const core::TensorView& c);
// The HC pre-norm's mix launch: the K-grouped BF16 product of `problems` (hi as B, lo as B2, accumulated
// into the zeroed D) on the cube cores, the sums of squares of `hc` over the same tiles on their vector cores.
void npu_hc_prenorm_gemm(const kernel::KGroupedProblems<kernel::HostRows>& problems, const core::TensorView& ends,
                         const core::TensorView& d, const DgaHcPrenormParams& hc);

// The host config for `desc`, after setting desc.num_cores to the cores the host plans for.
heuristics::GemmConfig host_gemm_config(heuristics::GemmDesc& desc);
void print_gemm_config(const char* kernel, const heuristics::GemmDesc& desc, const heuristics::GemmConfig& cfg);
// The host kernel over the problems of `problems` with args.config (JIT: a config-specialised entry over
// the same problems, listed first).
void run_host_gemm(const char* kernel, kernel::GemmArgs& args);

// Chooses the config for `desc`, sizes the launch by the tiles of `problems` and runs the kernel over them.
template <class Problems>
void launch_gemm(const char* kernel, const heuristics::GemmDesc& desc, kernel::GemmArgs& args,
                 const Problems& problems) {
  heuristics::GemmDesc planned = desc;
  args.config = host_gemm_config(planned);
  // Grouped launches: as many blocks as there are tiles over all problems, up to the cores.
  const int64_t tiles = kernel::tile_count(problems, args.config.tiling);
  if (tiles == 0) return;
  args.config.num_blocks = int(std::min<int64_t>(tiles, args.config.num_blocks));
  print_gemm_config(kernel, planned, args.config);
  if (runtime::jit_gemm()) {
    std::vector<kernel::GemmProblem> listed;
    for (int64_t p = 0; p < problems.count(); ++p) listed.push_back(problems.get(p));
    args.problems = listed.data();
    args.num_problems = int64_t(listed.size());
    return run_host_gemm(kernel, args);
  }
  runtime::host_backend().launch(kernel, args.config.num_blocks, [&](tile::host::Core& core) {
    kernel::gemm<tile::host::HostTarget>(core, args, args.config.tiling, problems);
  });
}

inline void launch_gemm(const char* kernel, const heuristics::GemmDesc& desc, kernel::GemmArgs& args) {
  launch_gemm(kernel, desc, args, kernel::ProblemArray{args.problems, args.num_problems});
}

}  // namespace deepgemm_ascend::api
