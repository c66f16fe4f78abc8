"""Upstream's ``deep_gemm.legacy``: the BF16 M- and K-grouped GEMMs of its Triton era, with upstream's names and
semantics, on this package's grouped GEMM kernel. The fused forms gather A's rows (M-grouped) or one operand's
K rows (K-grouped) by index in the kernel's GM -> L1 copy: nothing is gathered before the call.

Differences from upstream (docs/MIGRATION.md): rows whose id is -1 are zero in D (upstream zeroes a row only
when the Triton block holding it starts with -1, and computes the others with the block's group); K ranges
need not be multiples of a block; D of the K-grouped forms may be float32 or bfloat16.
"""
import torch

from . import _ops
from .grouped_gemm import get_mk_alignment_for_contiguous_layout

__all__ = ["m_grouped_bf16_gemm_nt_contiguous_tl", "m_grouped_bf16_gemm_nn_contiguous_tl",
           "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl", "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl",
           "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl", "b_fused_k_grouped_bf16_gemm_tn_contiguous_tl"]


def _tensor(t, arg):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{arg}: expected a torch.Tensor, got {type(t).__name__}")
    return t


def _pair(x, arg, n):
    if not (isinstance(x, (tuple, list)) and len(x) == n):
        raise TypeError(f"{arg}: expected a tuple of {n} tensors, got {type(x).__name__}")
    return x


def _m_grouped(b_layout, a, b, d, m_indices, m_row_indices=None):
    for t, arg in ((a, "a"), (b, "b"), (d, "d"), (m_indices, "m_indices")):
        _tensor(t, arg)
    if m_row_indices is not None:
        _tensor(m_row_indices, "m_row_indices")
    rows = m_indices.numel()
    if rows % get_mk_alignment_for_contiguous_layout():
        raise ValueError(f"m_indices: {rows} rows are not a multiple of the alignment "
                         f"{get_mk_alignment_for_contiguous_layout()} (get_mk_alignment_for_contiguous_layout)")
    _ops.check_tensors(a=a, b=b, d=d, m_indices=m_indices, m_row_indices=m_row_indices)
    if rows == 0:
        return
    _ops.m_grouped_gemm_contiguous("n" + b_layout, a, None, b, None, d, m_indices, False, False, 1, 128, 1, 128,
                                   m_row_indices)
    d.masked_fill_((m_indices < 0)[:, None], 0)  # upstream's Triton kernels store zeros for padding rows


def m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, m_indices):
    """D[m] = A[m] @ B[m_indices[m]].T; rows with id -1 are zero.

    a: bf16 [M, K]; b: bf16 [G, N, K] (K- or N-major); d: bf16 [M, N]; m_indices: int32 [M] with every group's
    rows starting at a multiple of get_mk_alignment_for_contiguous_layout() and M a multiple of it.
    Raises TypeError / ValueError with d untouched."""
    _m_grouped("t", a, b, d, m_indices)


def m_grouped_bf16_gemm_nn_contiguous_tl(a, b, d, m_indices):
    """As m_grouped_bf16_gemm_nt_contiguous_tl with b: bf16 [G, K, N]."""
    _m_grouped("n", a, b, d, m_indices)


def a_fused_m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, mappings):
    """D[m] = A[m_row_indices[m]] @ B[m_indices[m]].T with mappings = (m_indices, m_row_indices): A's rows
    gathered by index in the kernel (a negative index: a row of zeros); rows with id -1 are zero.

    a: bf16 [M_a, K] (any number of rows); b: bf16 [G, N, K]; d: bf16 [M, N]; m_indices and m_row_indices int32
    [M] (host tensors: the gathered form has no NPU kernel yet)."""
    m_indices, m_row_indices = _pair(mappings, "mappings", 2)
    _m_grouped("t", a, b, d, m_indices, m_row_indices)


def a_fused_m_grouped_bf16_gemm_nn_contiguous_tl(a, b, d, mappings):
    """As a_fused_m_grouped_bf16_gemm_nt_contiguous_tl with b: bf16 [G, K, N]."""
    m_indices, m_row_indices = _pair(mappings, "mappings", 2)
    _m_grouped("n", a, b, d, m_indices, m_row_indices)


def _k_grouped(a, b, d, handle, acc, gather_a):
    k_indices, k_start, k_end = _pair(handle, "handle", 3)
    if not isinstance(acc, bool):
        raise TypeError(f"acc: expected a bool, got {type(acc).__name__}")
    _ops.check_tensors(a=a, b=b, d=d, k_indices=k_indices, k_start=k_start, k_end=k_end)
    _ops.legacy_k_grouped_gemm(a, b, d, k_indices, k_start, k_end, acc, gather_a)


def a_fused_k_grouped_bf16_gemm_tn_contiguous_tl(a, b, d, handle, acc):
    """D[g] (+)= sum over k in [k_start[g], k_end[g]) of outer(A[k_indices[k]], B[k]) with handle = (k_indices,
    k_start, k_end): A's K rows gathered by index in the kernel (a negative index: zeros).

    a: bf16 [K_a, M]; b: bf16 [K, N]; d: float32 or bf16 [G, M, N], row-major; k_indices int32 [K]; k_start,
    k_end int32 [G] (an empty range: D[g] = 0, or unchanged with acc); acc: add onto D. Host tensors."""
    _k_grouped(a, b, d, handle, acc, True)


def b_fused_k_grouped_bf16_gemm_tn_contiguous_tl(a, b, d, handle, acc):
    """As a_fused_k_grouped_bf16_gemm_tn_contiguous_tl with B's K rows gathered instead: the sum of
    outer(A[k], B[k_indices[k]]); a: bf16 [K, M], b: bf16 [K_b, N]."""
    _k_grouped(a, b, d, handle, acc, False)
