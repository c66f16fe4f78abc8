"""Every kernel of `_C` as a torch.library custom op (`torch.ops.deepgemm_ascend.*`), so torch.compile
traces the public API without graph breaks: each op declares the outputs it writes in place
(mutates_args) and has a fake implementation that does nothing (every op returns None).

The public functions (gemm.py, fp8_gemm.py, ...) validate and prepare their arguments in Python and
call these ops; the ops turn tensors into descriptors and call `_C`. An input that is also the output
(C == D for accumulation) is passed once, with a flag, because an op input may not alias a mutated one.
"""
from typing import List, Optional

import torch

from . import _C
from ._tensor import desc, npu_stream, optional_desc

Tensor = torch.Tensor
_NS = "deepgemm_ascend"


_is_wrapped = getattr(getattr(torch._C, "_functorch", None), "is_functorch_wrapped_tensor", lambda t: False)


def _plain(args):
    """True for an eager call on ordinary tensors: no compiler tracing, no profiler (bench_kineto times the
    dispatched ops), no tensor subclass (fake, meta propagation) and no functorch wrapper — then the
    dispatcher can be skipped (~25 us a call)."""
    if torch.compiler.is_compiling() or torch.autograd._profiler_enabled():  # the profiler sees dispatched ops
        return False
    return all(type(a) is torch.Tensor and not _is_wrapped(a) for a in args if isinstance(a, torch.Tensor))


def _op(name, mutates):
    def register(fn):
        op = torch.library.custom_op(f"{_NS}::{name}", mutates_args=mutates)(fn)

        @op.register_fake
        def _fake(*args, **kwargs):
            return None

        def call(*args):
            return fn(*args) if _plain(args) else op(*args)

        call.op = op
        call.__name__ = call.__qualname__ = name
        call.__doc__ = fn.__doc__
        return call

    return register


def check_tensors(**named):
    """The descriptors' TypeError / ValueError, raised before the dispatcher sees the arguments (a meta
    tensor would otherwise be routed to the fake implementation). For NPU tensors, the NPU kernels of
    this call go to torch_npu's current stream."""
    npu = None
    for arg, t in named.items():
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{arg}: expected a torch.Tensor, got {type(t).__name__}")
        if t.device.type not in ("cpu", "npu"):
            raise ValueError(f"{arg}: tensors on '{t.device}' are not supported (use cpu or npu)")
        if npu is None and t.device.type == "npu":
            npu = t.device
    if npu is not None:
        _C.set_current_npu_stream(npu_stream(npu))


def _recipe(gran_mn: int, gran_k: int):
    """One operand's scale recipe as `_C` takes it (the ops keep plain ints: torch.library schemas)."""
    return _C.ScaleRecipe(gran_mn=gran_mn, gran_k=gran_k)


def _acc(c: Optional[Tensor], c_is_d: bool, d: Tensor, arg: str = "c"):
    return desc(d, arg) if c_is_d else optional_desc(c, arg)


def split_acc(c, d):
    """(c or None, c_is_d) for an optional accumulator that may be the output itself."""
    if c is not None and isinstance(c, torch.Tensor) and isinstance(d, torch.Tensor) and c is d:
        return None, True
    return c, False


@_op("bf16_gemm", ("d",))
def bf16_gemm(layout: str, a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor], c_is_d: bool) -> None:
    _C.bf16_gemm(layout, desc(a, "a"), desc(b, "b"), desc(d, "d"), _acc(c, c_is_d, d))


@_op("fp8_fp4_gemm", ("d",))
def fp8_fp4_gemm(layout: str, a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor, c: Optional[Tensor],
                 c_is_d: bool, gran_m: int, gran_k_a: int, gran_n: int, gran_k_b: int) -> None:
    _C.fp8_fp4_gemm(layout, desc(a, "a"), desc(sfa, "sfa"), desc(b, "b"), desc(sfb, "sfb"), desc(d, "d"),
                    _acc(c, c_is_d, d), _recipe(gran_m, gran_k_a), _recipe(gran_n, gran_k_b))


@_op("fp8_gemm_nt_skip_head_mid", ("d",))
def fp8_gemm_nt_skip_head_mid(a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor, left: int, mid: int,
                              right: int, gran_m: int, gran_k_a: int, gran_n: int, gran_k_b: int) -> None:
    _C.fp8_gemm_nt_skip_head_mid(desc(a, "a"), desc(sfa, "sfa"), desc(b, "b"), desc(sfb, "sfb"), desc(d, "d"),
                                 left, mid, right, _recipe(gran_m, gran_k_a), _recipe(gran_n, gran_k_b))


@_op("m_grouped_gemm_contiguous", ("d",))
def m_grouped_gemm_contiguous(layout: str, a: Tensor, sfa: Optional[Tensor], b: Tensor, sfb: Optional[Tensor],
                              d: Tensor, grouped_layout: Tensor, use_psum_layout: bool, ensure_zero_padding: bool,
                              gran_m: int, gran_k_a: int, gran_n: int, gran_k_b: int,
                              a_rows: Optional[Tensor] = None) -> None:
    _C.m_grouped_gemm_contiguous(layout, desc(a, "a"), optional_desc(sfa, "sfa"), desc(b, "b"),
                                 optional_desc(sfb, "sfb"), desc(d, "d"), desc(grouped_layout, "grouped_layout"),
                                 use_psum_layout, ensure_zero_padding, _recipe(gran_m, gran_k_a),
                                 _recipe(gran_n, gran_k_b),
                                 optional_desc(a_rows, "m_row_indices"))


@_op("legacy_k_grouped_gemm", ("d",))
def legacy_k_grouped_gemm(a: Tensor, b: Tensor, d: Tensor, k_indices: Tensor, k_start: Tensor, k_end: Tensor,
                          acc: bool, gather_a: bool) -> None:
    _C.legacy_k_grouped_gemm(desc(a, "a"), desc(b, "b"), desc(d, "d"), desc(k_indices, "k_indices"),
                             desc(k_start, "k_start"), desc(k_end, "k_end"), acc, gather_a)


@_op("m_grouped_gemm_masked", ("d",))
def m_grouped_gemm_masked(a: Tensor, sfa: Optional[Tensor], b: Tensor, sfb: Optional[Tensor], d: Tensor,
                          masked_m: Tensor, expected_m: int, gran_m: int, gran_k_a: int, gran_n: int,
                          gran_k_b: int) -> None:
    _C.m_grouped_gemm_masked(desc(a, "a"), optional_desc(sfa, "sfa"), desc(b, "b"), optional_desc(sfb, "sfb"),
                             desc(d, "d"), desc(masked_m, "masked_m"), expected_m, _recipe(gran_m, gran_k_a),
                             _recipe(gran_n, gran_k_b))


@_op("k_grouped_gemm", ("d",))
def k_grouped_gemm(a: Tensor, sfa: Optional[Tensor], b: Tensor, sfb: Optional[Tensor], d: Tensor, ks: List[int],
                   c: Optional[Tensor], c_is_d: bool, gran_k: int, psum_ends: Optional[List[int]],
                   device_ends: Optional[Tensor]) -> None:
    _C.k_grouped_gemm(desc(a, "a"), optional_desc(sfa, "sfa"), desc(b, "b"), optional_desc(sfb, "sfb"),
                      desc(d, "d"), ks, _acc(c, c_is_d, d), _recipe(1, gran_k), psum_ends,
                      optional_desc(device_ends, "grouped_layout"))


@_op("k_grouped_fp8_gemm_nt", ("d",))
def k_grouped_fp8_gemm_nt(a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor, ks: List[int],
                          c: Optional[Tensor], c_is_d: bool) -> None:
    _C.k_grouped_fp8_gemm_nt(desc(a, "a"), desc(sfa, "sfa"), desc(b, "b"), desc(sfb, "sfb"), desc(d, "d"), ks,
                             _acc(c, c_is_d, d))


@_op("tf32_hc_prenorm_gemm", ("d", "sqr_sum"))
def tf32_hc_prenorm_gemm(a: Tensor, b: Tensor, d: Tensor, sqr_sum: Tensor, num_splits: Optional[int]) -> None:
    _C.tf32_hc_prenorm_gemm(desc(a, "a"), desc(b, "b"), desc(d, "d"), desc(sqr_sum, "sqr_sum"), num_splits)


@_op("einsum", ("d",))
def einsum(expr: str, a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor], c_is_d: bool) -> None:
    _C.einsum(expr, desc(a, "a"), desc(b, "b"), desc(d, "d"), _acc(c, c_is_d, d))


@_op("fp8_einsum", ("d",))
def fp8_einsum(expr: str, a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor, c: Optional[Tensor],
               c_is_d: bool, gran_m: int, gran_n: int, gran_k: int) -> None:
    _C.fp8_einsum(expr, desc(a, "a"), desc(sfa, "sfa"), desc(b, "b"), desc(sfb, "sfb"), desc(d, "d"),
                  _acc(c, c_is_d, d), _recipe(gran_m, gran_k), _recipe(gran_n, gran_k))


@_op("fp8_fp4_mqa_logits", ("logits",))
def fp8_fp4_mqa_logits(q: Tensor, sfq: Optional[Tensor], kv: Tensor, sfkv: Tensor, weights: Tensor, ks: Tensor,
                       ke: Tensor, logits: Tensor, clean: bool, compressed: bool) -> None:
    _C.fp8_fp4_mqa_logits(desc(q, "q"), optional_desc(sfq, "sfq"), desc(kv, "kv"), desc(sfkv, "sfkv"),
                          desc(weights, "weights"), desc(ks, "cu_seq_len_k_start"), desc(ke, "cu_seq_len_k_end"),
                          desc(logits, "logits"), clean, compressed)


@_op("fp8_fp4_paged_mqa_logits", ("logits",))
def fp8_fp4_paged_mqa_logits(q: Tensor, sfq: Optional[Tensor], kv_cache: Tensor, weights: Tensor,
                             context_lens: Tensor, block_table: Tensor, logits: Tensor, clean: bool,
                             indices: Optional[Tensor]) -> None:
    _C.fp8_fp4_paged_mqa_logits(desc(q, "q"), optional_desc(sfq, "sfq"), desc(kv_cache, "kv_cache"),
                                desc(weights, "weights"), desc(context_lens, "context_lens"),
                                desc(block_table, "block_table"), desc(logits, "logits"), clean,
                                optional_desc(indices, "indices"))


@_op("to_fractal", ("out",))
def to_fractal(kind: str, t: Tensor, out: Tensor, bits: int) -> None:
    _C.to_fractal(getattr(_C.Fractal, kind), desc(t, "t"), desc(out, "out"), bits)


@_op("from_fractal", ("out",))
def from_fractal(kind: str, t: Tensor, out: Tensor, bits: int) -> None:
    _C.from_fractal(getattr(_C.Fractal, kind), desc(t, "t"), desc(out, "out"), bits)


@_op("mega_moe", ("y", "stats"))
def mega_moe(buffer_ptrs: List[int], rank: int, num_experts: int, num_max_tokens_per_rank: int, num_topk: int,
             hidden: int, intermediate_hidden: int, num_ring_tokens: int, mma_type: str, y: Tensor, l1: Tensor,
             l1_sf: Optional[Tensor], l2: Tensor, l2_sf: Optional[Tensor], stats: Optional[Tensor], clamp: float,
             fast_math: bool) -> None:
    shape = (num_experts, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, num_ring_tokens, mma_type)
    _C.mega_moe(buffer_ptrs, rank, shape, desc(y, "y"), desc(l1, "l1_weights"), optional_desc(l1_sf, "l1_weights"),
                desc(l2, "l2_weights"), optional_desc(l2_sf, "l2_weights"),
                optional_desc(stats, "cumulative_local_expert_recv_stats"), clamp, fast_math)


@_op("mega_moe_swiglu", ("out", "out_sf"))
def mega_moe_swiglu(h: Tensor, topk_weights: Tensor, out: Tensor, out_sf: Optional[Tensor], clamp: float,
                    fast_math: bool, interleaved: bool) -> None:
    _C.mega_moe_swiglu(desc(h, "h"), desc(topk_weights, "topk_weights"), desc(out, "out"),
                       optional_desc(out_sf, "out_sf"), clamp, fast_math, interleaved)
