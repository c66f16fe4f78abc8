"""MoE grouped GEMMs (M-grouped contiguous and masked, K-grouped), upstream names and semantics.

Every group is one problem of the same kernel: uneven groups balance across the AI cores and empty
groups (or masked_m[g] == 0) cost nothing.
"""
import itertools

import torch

from . import _C, _ops
from .fp8_gemm import kernel_operand, logical_size, npu_mx_scales, pair, recipes, required_scales
from .runtime import on_npu_kernels
from .utils.scale_rows import ScaleRows

_DEFAULT_K_GROUPED_RECIPE = (1, 1, 128)


def get_mk_alignment_for_contiguous_layout():
    """Alignment of group segments in contiguous layouts (rows for M-grouped, K for K-grouped)."""
    return _C.get_mk_alignment_for_contiguous_layout()


def set_mk_alignment_for_contiguous_layout(alignment):
    """Sets the alignment (a positive multiple of 16; K-grouped GEMMs need a multiple of 32)."""
    if not isinstance(alignment, int) or isinstance(alignment, bool):
        raise TypeError(f"alignment: expected an int, got {type(alignment).__name__}")
    _C.set_mk_alignment_for_contiguous_layout(alignment)


get_m_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout
get_k_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout


def get_theoretical_mk_alignment_for_contiguous_layout(expected_m=None):
    """The alignment our kernels want: 128, or for small expected group sizes the smallest multiple
    of 16 rows that holds expected_m (the host kernels split groups into separate problems, so any
    multiple of 16 keeps tiles from mixing groups)."""
    if expected_m is None:
        return 128
    if not isinstance(expected_m, int) or expected_m <= 0:
        raise ValueError(f"expected_m: must be a positive int, got {expected_m!r}")
    return min(128, (expected_m + 15) // 16 * 16)


def _contiguous(layout, a, b, d, grouped_layout, use_psum_layout, ensure_zero_padding, expected_m, scaled,
                recipe=None, recipe_a=None, recipe_b=None, disable_ue8m0_cast=False):
    if expected_m is not None and not use_psum_layout:
        raise ValueError("expected_m_for_psum_layout: only meaningful with use_psum_layout=True")
    sfa = sfb = None
    grans = (1, 128, 1, 128)
    scales_layout = layout  # the scales' orientation: the layout the caller named
    if scaled:
        (a, sfa), (b, sfb) = pair(a, "a"), pair(b, "b")
        if b.dim() != 3:
            raise ValueError(f"b: expected a 3-D tensor [G, ...], got {b.dim()}-D")
        b, lb = kernel_operand(b, layout[1])  # FP4 packed along N: read as the other layout
        layout = "n" + lb
        m, k = logical_size(a, "a")
        g = b.shape[0]
        n = logical_size(b[0], "b")[1 if layout == "nn" else 0]
        (gm, gka), (gn, gkb) = recipes(recipe, recipe_a, recipe_b, sfb)
        # Only rows inside a group have defined outputs: the scales of padding and gap rows are not checked.
        rows = ScaleRows("psum" if use_psum_layout else "ids", grouped_layout, "grouped_layout")
        sfa = required_scales(sfa, m, k, (gm, gka), "sfa", disable_ue8m0_cast, rows=rows)
        sfb = required_scales(sfb.transpose(1, 2) if scales_layout == "nn" else sfb, n, k, (gn, gkb), "sfb",
                              disable_ue8m0_cast, num_groups=g)
        sfa, gka = npu_mx_scales(sfa, k, gka)
        sfb, gkb = npu_mx_scales(sfb, k, gkb)
        grans = (1 if sfa.dtype != torch.float32 else gm, gka, 1 if sfb.dtype != torch.float32 else gn, gkb)
    _ops.check_tensors(a=a, sfa=sfa, b=b, sfb=sfb, d=d, grouped_layout=grouped_layout)
    _ops.m_grouped_gemm_contiguous(layout, a, sfa, b, sfb, d, grouped_layout, bool(use_psum_layout),
                                   bool(ensure_zero_padding), *grans)


def m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims="nk", use_psum_layout=False,
                                      ensure_zero_padding=True, expected_m_for_psum_layout=None):
    """D[m] = A[m] @ B[g(m)].T for MoE experts laid out contiguously.

    a: bf16 [M, K]; b: bf16 [G, N, K]; d: bf16 [M, N]. grouped_layout: int32 [M] group id per row
    (-1 = padding), or with use_psum_layout int32 [G] end offsets (group g covers rows
    [align(end[g-1], alignment), end[g])). Every group starts at a multiple of
    get_mk_alignment_for_contiguous_layout(). Padding rows of D are left untouched; with
    use_psum_layout and ensure_zero_padding the gap rows are zeroed. M == 0 is a no-op.
    Raises TypeError / ValueError (misaligned groups, ids out of range, wrong ranks) with D untouched.
    """
    _contiguous("nt", a, b, d, grouped_layout, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout,
                False)


def m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims="nk", use_psum_layout=False,
                                      ensure_zero_padding=True):
    """As m_grouped_bf16_gemm_nt_contiguous with b: bf16 [G, K, N]."""
    _contiguous("nn", a, b, d, grouped_layout, use_psum_layout, ensure_zero_padding, None, False)


def m_grouped_fp8_fp4_gemm_nt_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                         compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False,
                                         ensure_zero_padding=True, expected_m_for_psum_layout=None):
    """FP8 / FP4 variant: a = (A [M, K], SFA [M, K blocks]), b = (B [G, N, K], SFB [G, N blocks, K blocks]);
    recipes and scale layouts as fp8_fp4_gemm_nt (A scales per row)."""
    _contiguous("nt", a, b, d, grouped_layout, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout,
                True, recipe, recipe_a, recipe_b, disable_ue8m0_cast)


def m_grouped_fp8_fp4_gemm_nn_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                         compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False,
                                         ensure_zero_padding=True):
    """As m_grouped_fp8_fp4_gemm_nt_contiguous with b = (B [G, K, N], SFB [G, K blocks, N blocks])."""
    _contiguous("nn", a, b, d, grouped_layout, use_psum_layout, ensure_zero_padding, None, True, recipe, recipe_a,
                recipe_b, disable_ue8m0_cast)


def _masked(a, b, d, masked_m, expected_m, scaled, recipe=None, recipe_a=None, recipe_b=None,
            disable_ue8m0_cast=False):
    if not isinstance(expected_m, int) or isinstance(expected_m, bool):
        raise TypeError(f"expected_m: expected an int, got {type(expected_m).__name__}")
    sfa = sfb = None
    grans = (1, 128, 1, 128)
    if scaled:
        (a, sfa), (b, sfb) = pair(a, "a"), pair(b, "b")
        if a.dim() != 3 or b.dim() != 3:
            raise ValueError(f"{'a' if a.dim() != 3 else 'b'}: expected a 3-D tensor [G, ...]")
        g = a.shape[0]
        m, k = logical_size(a[0], "a")
        n = logical_size(b[0], "b")[0]
        (gm, gka), (gn, gkb) = recipes(recipe, recipe_a, recipe_b, sfb)
        # Rows at or past masked_m[g] have no defined output: their scales are not checked.
        sfa = required_scales(sfa, m, k, (gm, gka), "sfa", disable_ue8m0_cast, num_groups=g,
                              rows=ScaleRows("masked", masked_m, "masked_m"))
        sfb = required_scales(sfb, n, k, (gn, gkb), "sfb", disable_ue8m0_cast, num_groups=g)
        sfa, gka = npu_mx_scales(sfa, k, gka)
        sfb, gkb = npu_mx_scales(sfb, k, gkb)
        grans = (1 if sfa.dtype != torch.float32 else gm, gka, 1 if sfb.dtype != torch.float32 else gn, gkb)
    _ops.check_tensors(a=a, sfa=sfa, b=b, sfb=sfb, d=d, masked_m=masked_m)
    _ops.m_grouped_gemm_masked(a, sfa, b, sfb, d, masked_m, expected_m, *grans)


def m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, compiled_dims="nk"):
    """D[g, m] = A[g, m] @ B[g].T for m < masked_m[g] (MoE decode).

    a: bf16 [G, Mmax, K]; b: bf16 [G, N, K]; d: bf16 [G, Mmax, N]; masked_m: int32 [G], each in
    [0, Mmax]; expected_m: a positive hint for tile selection only. Rows at or beyond masked_m[g] are
    left untouched. (On the NPU the kernels read masked_m on the device; the host backend reads it
    when the kernel runs.)
    """
    _masked(a, b, d, masked_m, expected_m, False)


def m_grouped_fp8_fp4_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe=None, recipe_a=None, recipe_b=None,
                                     compiled_dims="nk", disable_ue8m0_cast=False):
    """FP8 / FP4 variant: a = (A [G, Mmax, K], SFA [G, Mmax, K blocks]), b = (B [G, N, K], SFB [G, ...])."""
    _masked(a, b, d, masked_m, expected_m, True, recipe, recipe_a, recipe_b, disable_ue8m0_cast)


def _npu_k_grouped_scales(sfa, sfb, ks, gran_k):
    """MX recipes (gran_k 32: powers of two) go to the MX cube as scale pairs by global K; float32 scales of
    128 K values stay float32 and are promoted on the vector cores. Chosen by the recipe, not the values
    (reading them would stall the NPU stream)."""
    from .utils.layout import k_grouped_mx_pairs

    if gran_k == 128:
        return sfa, sfb, gran_k
    return k_grouped_mx_pairs(sfa, ks, gran_k, "sfa"), k_grouped_mx_pairs(sfb, ks, gran_k, "sfb"), 32


def _k_grouped(a, b, d, ks, grouped_layout, c, scaled, recipe, use_psum_layout):
    if c is None:
        raise ValueError("c: K-grouped GEMMs accumulate: c is required (it may be d itself)")
    sfa = sfb = None
    if scaled:
        (a, sfa), (b, sfb) = pair(a, "a"), pair(b, "b")
    npu = isinstance(a, torch.Tensor) and on_npu_kernels(a)
    device_ends = None
    if use_psum_layout:
        # End offsets with aligned starts; ks_cpu (aligned sizes upstream uses to size buffers) is not needed.
        if not isinstance(grouped_layout, torch.Tensor) or grouped_layout.dtype != torch.int32 or grouped_layout.dim() != 1:
            raise TypeError("grouped_layout: the psum layout needs an int32 [G] tensor of end offsets")
        ks = []
        device_ends = grouped_layout  # the kernels read the offsets (the host's in C++): no host sync
    elif ks is None or not isinstance(ks, (list, tuple)) or not all(isinstance(v, int) for v in ks):
        raise TypeError("ks_cpu: expected a list of per-group K sizes (ints)")
    elif npu:  # the NPU kernel reads the groups' end offsets from the device
        device_ends = torch.tensor(list(itertools.accumulate(ks)), dtype=torch.int32).to(a.device)
    gran_k = 128
    if scaled:
        gm, gn, gran_k = recipe
        if gm != 1 or gn != 1 or gran_k not in (32, 128):
            raise ValueError(f"recipe: K-grouped FP8 GEMMs take (1, 1, 32) or (1, 1, 128), got {recipe!r}")
        if npu and not use_psum_layout:
            sfa, sfb, gran_k = _npu_k_grouped_scales(sfa, sfb, ks, gran_k)
    _ops.check_tensors(a=a, sfa=sfa, b=b, sfb=sfb, d=d, c=c)
    c, c_is_d = _ops.split_acc(c, d)
    _ops.k_grouped_gemm(a, sfa, b, sfb, d, [int(x) for x in ks], c, c_is_d, gran_k, None, device_ends)


def k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout=None, c=None, compiled_dims="mn",
                                      use_psum_layout=False):
    """D[g] = C[g] + A_g.T @ B_g for MoE weight gradients.

    a: bf16 [sum K, M]; b: bf16 [sum K, N]; d, c: float32 [G, M, N] (c required, may be d); ks_cpu:
    per-group K sizes, each a multiple of get_mk_alignment_for_contiguous_layout(); group g owns rows
    [sum(ks[:g]), sum(ks[:g+1])). Empty groups leave D[g] = C[g]. grouped_layout (the same sizes on the
    device) is accepted for upstream compatibility. With use_psum_layout, grouped_layout holds end
    offsets instead: group g owns rows [align(end[g-1], alignment), end[g]) (sizes need not be aligned)
    and ks_cpu may be None or [].
    """
    _k_grouped(a, b, d, ks_cpu, grouped_layout, c, False, None, use_psum_layout)


def k_grouped_fp8_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout=None, c=None, recipe=_DEFAULT_K_GROUPED_RECIPE,
                                     compiled_dims="mn", use_psum_layout=False):
    """FP8 variant: a = (A [sum K, M], SFA [sum_g ceil(k_g / gran_k), M] float32), b likewise with N."""
    _k_grouped(a, b, d, ks_cpu, grouped_layout, c, True, recipe, use_psum_layout)


def k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks_cpu, grouped_layout=None, c=None, recipe=_DEFAULT_K_GROUPED_RECIPE,
                                     compiled_dims="nk", use_psum_layout=False):
    """FP8 K-grouped GEMM in upstream's flat K-major layout: D[g] = C[g] + A_g @ B_g.T.

    a = (A, SFA): A a contiguous FP8 buffer holding A_g [M, ks[g]] row-major for every group in order,
    SFA float32 [M, sum(ks) / 128] (any strides); b likewise with N. recipe must be (1, 1, 128), every
    ks[g] a multiple of 128, no psum layout; d, c float32 [G, M, N] (c required, may be d).
    """
    if tuple(recipe) != (1, 1, 128):
        raise ValueError(f"recipe: this layout takes exactly (1, 1, 128), got {recipe!r}")
    if use_psum_layout:
        raise ValueError("use_psum_layout: not available for the K-major K-grouped layout")
    if c is None:
        raise ValueError("c: K-grouped GEMMs accumulate: c is required (it may be d itself)")
    if ks_cpu is None or not isinstance(ks_cpu, (list, tuple)) or not all(isinstance(v, int) for v in ks_cpu):
        raise TypeError("ks_cpu: expected a list of per-group K sizes (ints)")
    (a, sfa), (b, sfb) = pair(a, "a"), pair(b, "b")
    _ops.check_tensors(a=a, sfa=sfa, b=b, sfb=sfb, d=d, c=c)
    c, c_is_d = _ops.split_acc(c, d)
    _ops.k_grouped_fp8_gemm_nt(a, sfa, b, sfb, d, [int(x) for x in ks_cpu], c, c_is_d)


# Upstream aliases.
m_grouped_fp8_gemm_nt_contiguous = m_grouped_fp8_fp4_gemm_nt_contiguous
m_grouped_fp8_gemm_nn_contiguous = m_grouped_fp8_fp4_gemm_nn_contiguous
m_grouped_fp8_gemm_nt_masked = m_grouped_fp8_fp4_gemm_nt_masked
fp8_m_grouped_gemm_nt_masked = m_grouped_fp8_fp4_gemm_nt_masked
bf16_m_grouped_gemm_nt_masked = m_grouped_bf16_gemm_nt_masked
