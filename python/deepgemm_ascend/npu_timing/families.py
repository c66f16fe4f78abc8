"""The kernel families `deepgemm-ascend model` runs on the timing model: per family its default
(production) shape, what the three numbers of a --shapes entry mean, and how to build one call's inputs.

The inputs are built as the benchmarks build them (bench/*.py: the same shapes, routing and recipes), but
cheaply where the values do not matter: timing-only launches skip the arithmetic, so only what the
kernels' scalar units read (routing, lengths, block tables) and what the API validates (scale formats) has
to be real. Each builder returns (call, Work): the work (bounds.py) is what the call must do at least, the
measure of its prediction.
"""
import dataclasses
import math
from typing import Callable, Dict, Tuple

import torch

from .bounds import Work

Shape = Tuple[int, ...]  # three numbers, four for the families whose shape_meaning names four
GRAN = 128  # the block recipe's granularity: A (1, 128), B (128, 128), fp32 scales


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    description: str
    default: Shape
    shape_meaning: str  # what the numbers of a --shapes entry stand for (3 or 4 of them)
    build: Callable[[Shape], Tuple[Callable[[], object], Work]]
    # Kernels whose launches move data between ranks (and the barriers that order them): reported apart and
    # left out of the time measured against the bound, whose work counts no communication.
    communication: Tuple[str, ...] = ()

    @property
    def dims(self) -> int:
        return len(self.shape_meaning.split(","))


def _randn(*shape, dtype=torch.bfloat16, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


# Where the operands lie matters to the model (a Fixpipe row that is not 512 B aligned takes several GM write
# requests). On the 950, torch_npu's caching allocator hands out blocks of multiples of 512 B with no pad
# (Ascend/pytorch, NPUCachingAllocator.cpp: kMinBlockSize, AddPadSize 0 on Ascend910_95) inside segments
# whose base is assumed at least 512 B aligned (aclrtMalloc documents 64 B); CPU tensors start 64 B aligned.
# The kernels' own workspace is carved 512 B aligned on the model too (NpuDevice::workspace).
NPU_ALIGN = 512


def _placed_one(t):
    if isinstance(t, (tuple, list)):
        return type(t)(_placed_one(x) for x in t)
    if not isinstance(t, torch.Tensor):
        return t
    src = torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage())
    raw = torch.empty(src.numel() + NPU_ALIGN, dtype=torch.uint8)
    off = (-raw.data_ptr()) % NPU_ALIGN
    raw[off:off + src.numel()].copy_(src)
    # as_strided's storage offset counts from the start of raw's storage
    return raw[off:].view(t.dtype).as_strided(t.shape, t.stride(), off // t.element_size() + t.storage_offset())


def _placed(*objs):
    """Copies of the tensors in `objs` (tensors, or tuples / lists of them) at NPU_ALIGN-aligned addresses,
    strides and storage offsets kept."""
    return tuple(_placed_one(o) for o in objs)


# ---- dense GEMMs -------------------------------------------------------------------------------------
def _bf16(shape: Shape):
    from ..gemm import bf16_gemm_nt

    m, n, k = shape
    a, b, d = _placed(_randn(m, k), _randn(n, k, seed=1), torch.empty(m, n, dtype=torch.bfloat16))
    return (lambda: bf16_gemm_nt(a, b, d)), Work(2.0 * m * n * k, "bf16", 2.0 * (m * k + n * k + m * n))


def _operand_bytes(rows: int, k: int, side) -> float:
    """HBM bytes of one quantised [rows, K] operand: its codes and its scales (float32, or UE8M0 bytes when
    the side's K granule is the MX block of 32)."""
    kind, gran_mn, gran_k = side
    scales = math.ceil(rows / gran_mn) * math.ceil(k / gran_k)
    return rows * k * (0.5 if kind == "fp4" else 1.0) + scales * (1 if gran_k == 32 else 4)


def _promotion_bytes(rows: int, n: int, k: int, side_a) -> float:
    """Vector bytes of a float32-scale promotion: each K block's fp32 partial product passes the vector cores
    once (none for MX scales, which the cube applies)."""
    return 0.0 if side_a[2] == 32 else 4.0 * rows * n * math.ceil(k / side_a[2])


# FP8 x FP4 on the NPU: the MX cube, both operands with UE8M0 scales per 32 K values (the NPU kernels take
# float32 scales for both operands or UE8M0 for both, so not the benchmark's fp8xfp4 recipe's (1, 128) A).
FP8XFP4_NPU = (("fp8", 1, 32), ("fp4", 1, 32), True)
# FP4 x FP4: the MX cube's fp4 mode, both operands e2m1 with UE8M0 scales per 32 K values.
MXFP4_NPU = (("fp4", 1, 32), ("fp4", 1, 32), True)


def _fp8(recipe):
    """recipe: a bench.fp8.RECIPES name or a (side A, side B, UE8M0) triple like its entries."""
    def build(shape: Shape):
        from ..bench.fp8 import RECIPES, Operand
        from ..fp8_gemm import fp8_fp4_gemm_nt

        m, n, k = shape
        side_a, side_b, ue8m0 = RECIPES[recipe] if isinstance(recipe, str) else recipe
        qa = Operand(_randn(m, k, dtype=torch.float32), side_a, ue8m0, False, "cpu")
        qb = Operand(_randn(n, k, dtype=torch.float32, seed=1), side_b, ue8m0, False, "cpu")
        a, b, d = _placed(qa.stored, qb.stored, torch.empty(m, n, dtype=torch.bfloat16))
        cube = "fp4" if side_a[0] == side_b[0] == "fp4" else "fp8"  # FP8 x FP4 widens its FP4 side to fp8
        work = Work(2.0 * m * n * k, cube, _operand_bytes(m, k, side_a) + _operand_bytes(n, k, side_b) + 2.0 * m * n,
                    _promotion_bytes(m, n, k, side_a))
        return (lambda: fp8_fp4_gemm_nt(a, b, d, recipe_a=side_a[1:], recipe_b=side_b[1:])), work
    return build


# ---- grouped GEMMs (one rank of DeepSeek-V3's MoE layer, as bench/moe.py) -----------------------------
BLOCK_A, BLOCK_B = ("fp8", 1, GRAN), ("fp8", GRAN, GRAN)


def _expert_weights(groups: int, n: int, k: int):
    """FP8 [G, N, K] weights with (128, 128) fp32 scales: one expert quantised, repeated (values do not matter)."""
    from ..utils.math import per_block_cast_to_fp8

    q, sf = per_block_cast_to_fp8(_randn(n, k, dtype=torch.float32, seed=2), False)
    return q.unsqueeze(0).repeat(groups, 1, 1), sf.unsqueeze(0).repeat(groups, 1, 1)


def _group_ids(loads):
    from ..bench.moe import _align
    from ..grouped_gemm import get_mk_alignment_for_contiguous_layout

    align = get_mk_alignment_for_contiguous_layout()
    return torch.tensor([e for g, s in enumerate(loads) for e in [g] * s + [-1] * (_align(s, align) - s)],
                        dtype=torch.int32)


def _grouped_work(loads, n: int, k: int, side_a, side_b) -> Work:
    """The work of an M-grouped FP8 GEMM: every routed row once, the weights of every group with rows."""
    rows, used = sum(loads), sum(1 for s in loads if s)
    return Work(2.0 * rows * n * k, "fp8", _operand_bytes(rows, k, side_a) + used * _operand_bytes(n, k, side_b)
                + 2.0 * rows * n, _promotion_bytes(rows, n, k, side_a))


def _contiguous(shape: Shape):
    from ..bench.moe import LOCAL_EXPERTS, _loads
    from ..grouped_gemm import m_grouped_fp8_gemm_nt_contiguous
    from ..utils.math import per_token_cast_to_fp8

    rows, n, k = shape
    loads = _loads(rows, LOCAL_EXPERTS, torch.Generator().manual_seed(0))
    ids = _group_ids(loads)
    a = per_token_cast_to_fp8(_randn(ids.numel(), k, dtype=torch.float32), False)
    b = _expert_weights(LOCAL_EXPERTS, n, k)
    a, b, d, ids = _placed(a, b, torch.empty(ids.numel(), n, dtype=torch.bfloat16), ids)
    return (lambda: m_grouped_fp8_gemm_nt_contiguous(a, b, d, ids)), _grouped_work(loads, n, k, BLOCK_A, BLOCK_B)


def _equal_groups(recipe: str):
    """M-grouped contiguous GEMMs over `groups` groups of equal rows: recipe 'bf16', 'mx' (MXFP8) or 'block'."""
    def build(shape: Shape):
        from ..bench.fp8 import RECIPES, Operand
        from ..grouped_gemm import m_grouped_bf16_gemm_nt_contiguous, m_grouped_fp8_fp4_gemm_nt_contiguous

        groups, per_group, n, k = shape
        ids = _group_ids([per_group] * groups)
        ids, d = _placed(ids, torch.empty(ids.numel(), n, dtype=torch.bfloat16))
        if recipe == "bf16":
            a, b = _placed(_randn(ids.numel(), k), _randn(n, k, seed=1).unsqueeze(0).repeat(groups, 1, 1))
            rows = groups * per_group
            work = Work(2.0 * rows * n * k, "bf16", 2.0 * (rows * k + groups * n * k + rows * n))
            return (lambda: m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids)), work
        side_a, side_b, ue8m0 = RECIPES[recipe]
        qa = Operand(_randn(ids.numel(), k, dtype=torch.float32), side_a, ue8m0, False, "cpu")
        qb = Operand(_randn(n, k, dtype=torch.float32, seed=1), side_b, ue8m0, False, "cpu")
        a, b = _placed(qa.stored, tuple(t.unsqueeze(0).repeat(groups, *([1] * t.dim())) for t in qb.stored))
        return (lambda: m_grouped_fp8_fp4_gemm_nt_contiguous(a, b, d, ids, recipe_a=side_a[1:],
                                                             recipe_b=side_b[1:])), \
            _grouped_work([per_group] * groups, n, k, side_a, side_b)
    return build


def _masked(shape: Shape):
    from ..bench.moe import _align
    from ..grouped_gemm import m_grouped_fp8_gemm_nt_masked
    from ..utils.math import per_token_cast_to_fp8

    groups, expected_m, n, k = shape
    m_max = max(128, _align(expected_m + expected_m // 2, 16))
    lo, hi = max(1, (expected_m + 1) // 2), min(m_max, expected_m + expected_m // 2)
    masked = torch.randint(lo, hi + 1, (groups,), generator=torch.Generator().manual_seed(3), dtype=torch.int32)
    qa, sa = per_token_cast_to_fp8(_randn(groups * m_max, k, dtype=torch.float32), False)
    a = (qa.view(groups, m_max, k), sa.view(groups, m_max, -1))
    b = _expert_weights(groups, n, k)
    a, b, d, masked = _placed(a, b, torch.empty(groups, m_max, n, dtype=torch.bfloat16), masked)
    return (lambda: m_grouped_fp8_gemm_nt_masked(a, b, d, masked, expected_m)), \
        _grouped_work(masked.tolist(), n, k, BLOCK_A, BLOCK_B)


def _k_grouped(shape: Shape):
    from ..bench.moe import KG_GROUPS, _align, _loads
    from ..grouped_gemm import get_mk_alignment_for_contiguous_layout, k_grouped_bf16_gemm_tn_contiguous

    rows, m, n = shape
    loads = _loads(rows, KG_GROUPS, torch.Generator().manual_seed(4))
    ks = [_align(s, get_mk_alignment_for_contiguous_layout()) for s in loads]
    a, b = _randn(sum(ks), m), _randn(sum(ks), n, seed=1)
    c, d = torch.zeros(KG_GROUPS, m, n), torch.empty(KG_GROUPS, m, n)
    a, b, c, d, ks_t = _placed(a, b, c, d, torch.tensor(ks, dtype=torch.int32))
    work = Work(2.0 * rows * m * n, "bf16", 2.0 * rows * (m + n) + 8.0 * KG_GROUPS * m * n)  # C read, D written
    return (lambda: k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_t, c=c)), work


# ---- MQA logits, HC pre-norm, Mega MoE ------------------------------------------------------------------
HEAD_DIM = 128


def _mqa(shape: Shape):
    from ..mqa_logits import fp8_fp4_mqa_logits
    from ..utils.math import per_custom_dims_cast_to_fp8

    s, skv, h = shape
    q = _randn(s, h, HEAD_DIM, dtype=torch.float8_e4m3fn)
    kv = per_custom_dims_cast_to_fp8(_randn(skv, HEAD_DIM, dtype=torch.float32, seed=1), (0,), False)
    w = _randn(s, h, dtype=torch.float32, seed=2)
    ks = torch.zeros(s, dtype=torch.int32)  # causal ranges, as bench/mqa.py
    ke = (torch.arange(s, dtype=torch.int32) + max(skv - s, 0) + 1).clamp(max=skv).to(torch.int32)
    cost = int((ke - ks).sum())
    q, kv, w, ks, ke = _placed(q, kv, w, ks, ke)
    # Logits: every [S, SKV] value written; the vector cores pass each head's score of a live pair once.
    work = Work(2.0 * cost * h * HEAD_DIM, "fp8", s * h * (HEAD_DIM + 4) + skv * (HEAD_DIM + 4) + 4.0 * s * skv,
                4.0 * cost * h)
    return (lambda: fp8_fp4_mqa_logits((q, None), kv, w, ks, ke)), work


PAGED_NEXT_N, PAGED_BLOCK_KV = 2, 64


def _paged_mqa(shape: Shape):
    from ..mqa_logits import fp8_fp4_paged_mqa_logits, get_paged_mqa_logits_metadata
    from ..runtime import get_num_ai_cores

    batch, ctx, h = shape
    pages = math.ceil(ctx / PAGED_BLOCK_KV)
    cache = torch.zeros(batch * pages, PAGED_BLOCK_KV, 1, HEAD_DIM + 4, dtype=torch.uint8)
    # A block: its block_kv rows of values, then their block_kv fp32 scales (here 1).
    cache.view(batch * pages, -1)[:, PAGED_BLOCK_KV * HEAD_DIM:] = torch.ones(PAGED_BLOCK_KV).view(torch.uint8)
    table = torch.randperm(batch * pages, generator=torch.Generator().manual_seed(5)).view(batch, pages)
    table = table.to(torch.int32)
    lens = torch.full((batch, PAGED_NEXT_N), ctx, dtype=torch.int32)
    q = _randn(batch, PAGED_NEXT_N, h, HEAD_DIM, dtype=torch.float8_e4m3fn)
    w = _randn(batch * PAGED_NEXT_N, h, dtype=torch.float32, seed=1)
    meta = get_paged_mqa_logits_metadata(lens, PAGED_BLOCK_KV, get_num_ai_cores())
    q, cache, w, lens, table, meta = _placed(q, cache, w, lens, table, meta)
    rows = batch * PAGED_NEXT_N  # query rows; each reads its sequence's blocks
    work = Work(2.0 * rows * h * HEAD_DIM * ctx, "fp8",
                batch * pages * PAGED_BLOCK_KV * (HEAD_DIM + 4) + rows * h * (HEAD_DIM + 4) + 4.0 * rows * ctx,
                4.0 * rows * h * ctx)
    return (lambda: fp8_fp4_paged_mqa_logits((q, None), cache, w, lens, table, meta, ctx)), work


def _hc(shape: Shape):
    from ..hc_prenorm import tf32_hc_prenorm_gemm

    m, n, k = shape
    a, b = _randn(m, k), _randn(n, k, dtype=torch.float32, seed=1)
    a, b, d, sq = _placed(a, b, torch.empty(m, n), torch.empty(m))
    # TF32-exact on the BF16 cube: B as a high and a low BF16 part, two products; the squares of A on the
    # vector cores (one fp32 pass).
    work = Work(2 * 2.0 * m * n * k, "bf16", 2.0 * m * k + 4.0 * n * k + 4.0 * m * (n + 1), 4.0 * m * k)
    return (lambda: tf32_hc_prenorm_gemm(a, b, d, sq)), work


MEGA_EXPERTS, MEGA_TOPK, MEGA_CLAMP = 32, 8, 10.0  # one rank of EP8 over 256 experts, top-8
# The dispatch (each routed token's row pulled from its rank) and the combine's send (each expert output pushed
# into its token's rank), and the barriers around them; on one rank the copies stay in this rank's memory.
MEGA_COMMUNICATION = ("dga_mega_moe_dispatch_barrier", "dga_mega_moe_gather", "dga_mega_moe_scatter",
                      "dga_mega_moe_combine_barrier")


def _mega_weights(experts: int, hidden: int, inter: int):
    """L1 and L2 FP4 weights with packed UE8M0 scales per 32, in the kernel's form (testing/mega_moe.py's
    make_weights' recipe): one expert quantised and repeated (values do not matter), no float64 copies."""
    from ..mega import transform_weights_for_mega_moe
    from ..utils.math import per_token_cast_to_fp4

    def quant(rows: int, cols: int, seed: int):
        q, sf = per_token_cast_to_fp4(_randn(rows, cols, seed=seed), use_ue8m0=True, gran_k=32,
                                      use_packed_ue8m0=True)
        return q.unsqueeze(0).repeat(experts, 1, 1), sf.unsqueeze(0).repeat(experts, 1, 1)

    return transform_weights_for_mega_moe(quant(2 * inter, hidden, 6), quant(hidden, inter, 7))


def _mega_moe(shape: Shape):
    from ..mega import fp8_fp4_mega_moe, get_symm_buffer_for_mega_moe
    from ..testing import mega_moe as tm

    tokens, hidden, inter = shape
    l1, l2 = _mega_weights(MEGA_EXPERTS, hidden, inter)
    inp = tm.make_rank_inputs(tokens, hidden, MEGA_EXPERTS, MEGA_TOPK, 0)
    buf = get_symm_buffer_for_mega_moe(None, MEGA_EXPERTS, tokens, MEGA_TOPK, hidden, inter)
    tm.fill_buffer(buf, inp)
    y, l1, l2 = _placed(torch.empty(tokens, hidden, dtype=torch.bfloat16), l1, l2)
    pairs = int((inp.topk_idx >= 0).sum())
    used = int(torch.unique(inp.topk_idx[inp.topk_idx >= 0]).numel())
    weights = used * 3 * hidden * inter * (0.5 + 1 / 32)  # FP4 codes and UE8M0 scales per 32, L1 (2x) and L2
    # Tokens in (FP8 and their scales), y out (BF16); SwiGLU over each pair's 2 x intermediate fp32 values and the
    # combine over each pair's hidden fp32 values on the vector cores.
    work = Work(2.0 * pairs * hidden * inter * 3, "fp8", weights + tokens * hidden * (1 + 1 / 32) + 2.0 * tokens * hidden,
                4.0 * pairs * (2 * inter + hidden))
    return (lambda: fp8_fp4_mega_moe(y, l1, l2, buf, activation_clamp=MEGA_CLAMP)), work


FAMILIES: Dict[str, Family] = {f.name: f for f in (
    Family("bf16", "BF16 dense GEMM bf16_gemm_nt", (4096, 7168, 16384), "M,N,K", _bf16),
    Family("fp8", "FP8 dense GEMM fp8_fp4_gemm_nt, block scales (1,128) x (128,128) fp32", (4096, 7168, 16384),
           "M,N,K", _fp8("block")),
    Family("mxfp8", "FP8 dense GEMM fp8_fp4_gemm_nt, MX scales (1,1,32) UE8M0", (4096, 7168, 16384), "M,N,K",
           _fp8("mx")),
    Family("fp8xfp4", "FP8 x FP4 dense GEMM fp8_fp4_gemm_nt, MX scales (1,1,32) UE8M0", (4096, 7168, 16384),
           "M,N,K", _fp8(FP8XFP4_NPU)),
    Family("mxfp4", "FP4 x FP4 dense GEMM fp8_fp4_gemm_nt, MX scales (1,1,32) UE8M0", (4096, 7168, 16384),
           "M,N,K", _fp8(MXFP4_NPU)),
    Family("contiguous", "M-grouped contiguous FP8 GEMM (block scales), 32 experts", (4096, 4096, 7168),
           "routed rows,N,K", _contiguous),
    Family("grouped-bf16", "M-grouped contiguous BF16 GEMM, equal groups", (8, 4096, 4096, 7168),
           "groups,rows per group,N,K", _equal_groups("bf16")),
    Family("grouped-mxfp8", "M-grouped contiguous FP8 GEMM, MX scales (1,1,32) UE8M0, equal groups",
           (8, 4096, 4096, 7168), "groups,rows per group,N,K", _equal_groups("mx")),
    Family("grouped-fp8", "M-grouped contiguous FP8 GEMM, block scales (1,128) x (128,128) fp32, equal groups",
           (8, 4096, 4096, 7168), "groups,rows per group,N,K", _equal_groups("block")),
    Family("masked", "M-grouped masked FP8 GEMM (block scales)", (32, 32, 4096, 7168),
           "groups,expected_m,N,K", _masked),
    Family("k-grouped", "K-grouped BF16 GEMM tn, 8 experts, fp32 D += C", (2048, 7168, 2048),
           "routed rows,M,N", _k_grouped),
    Family("mqa", "MQA logits fp8_fp4_mqa_logits (FP8, causal ranges)", (4096, 4096, 64), "S,SKV,H", _mqa),
    Family("paged-mqa", f"paged MQA logits (FP8, next_n {PAGED_NEXT_N}, block_kv {PAGED_BLOCK_KV})",
           (64, 8192, 64), "batch,context,H", _paged_mqa),
    Family("hc", "HC pre-norm GEMM tf32_hc_prenorm_gemm (unsplit)", (4096, 24, 28672), "M,N,K", _hc),
    Family("mega-moe", f"Mega MoE fp8_fp4_mega_moe, one rank, {MEGA_EXPERTS} experts, top-{MEGA_TOPK}",
           (128, 2048, 1024), "tokens,hidden,intermediate", _mega_moe, MEGA_COMMUNICATION),
)}

# DeepGEMM-Ascend's published figures (us, TFLOPS) per (family, shape): measured on an Ascend 950DT, CANN
# 9.20, cold L2. Their FP8 x FP8 figure does not name its scale recipe; it stands beside both FP8 families.
PUBLISHED: Dict[Tuple[str, Shape], Tuple[float, float]] = {
    ("bf16", (4096, 7168, 16384)): (2229.9, 431.0),
    ("fp8", (4096, 7168, 16384)): (1117.6, 861.0),
    ("mxfp8", (4096, 7168, 16384)): (1117.6, 861.0),
}
