"""FP8 / FP4 dense GEMMs with block scaling: D = C + (A * SFA) @ (B * SFB), upstream names and semantics."""
import re

import torch

from . import _C, _ops
from .utils.scale_rows import require_ue8m0_values

_FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)
_FP4 = tuple(t for t in (torch.int8, torch.uint8, getattr(torch, "float4_e2m1fn_x2", None)) if t is not None)
_DEFAULT_FP32_RECIPE = (1, 128, 128)
_DEFAULT_PACKED_RECIPE = (1, 1, 128)


def pair(x, arg):
    if not (isinstance(x, (tuple, list)) and len(x) == 2):
        raise TypeError(f"{arg}: expected a (tensor, scale factors) pair, got {type(x).__name__}")
    for t, what in zip(x, (arg, f"{arg} scale factors")):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")
    return x


def _ints(r, n, arg):
    if not (isinstance(r, (tuple, list)) and len(r) == n and all(isinstance(v, int) and v > 0 for v in r)):
        raise ValueError(f"{arg}: expected a tuple of {n} positive ints, got {r!r}")
    if r[-1] not in (32, 128):
        raise ValueError(f"{arg}: gran_k must be 32 (MX) or 128, got {r[-1]}")
    return tuple(r)


def recipes(recipe, recipe_a, recipe_b, sfb):
    """((gran_m, gran_k_a), (gran_n, gran_k_b)) from the upstream arguments."""
    if recipe is not None:
        if recipe_a is not None or recipe_b is not None:
            raise ValueError("recipe: give either recipe or recipe_a / recipe_b, not both")
        gm, gn, gk = _ints(recipe, 3, "recipe")
        return (gm, gk), (gn, gk)
    if recipe_a is not None or recipe_b is not None:
        if recipe_a is None or recipe_b is None:
            raise ValueError("recipe_a: recipe_a and recipe_b must be given together")
        return _ints(recipe_a, 2, "recipe_a"), _ints(recipe_b, 2, "recipe_b")
    gm, gn, gk = _DEFAULT_FP32_RECIPE if sfb.dtype == torch.float32 else _DEFAULT_PACKED_RECIPE
    return (gm, gk), (gn, gk)


def is_mn_packed_fp4(t):
    """True for a packed FP4 operand packed along its second-to-last dimension (the contiguous one): upstream's
    MN-major FP4, e.g. ``transpose_packed_fp4(q).T``, whose transposed view is packed along its last one."""
    return (isinstance(t, torch.Tensor) and t.dtype in _FP4 and t.dim() >= 2 and t.size(-1) > 1
            and t.stride(-1) != 1 and t.stride(-2) == 1)


def kernel_operand(t, letter):
    """(t as the kernels read it, its layout letter): packed FP4 values are packed along the contiguous
    dimension, as upstream packs them; the kernels take them packed along the last one, so an operand packed
    along its second-to-last dimension is passed transposed, with the other layout letter ('n' <-> 't')."""
    if is_mn_packed_fp4(t):
        return t.mT, "t" if letter == "n" else "n"
    return t, letter


def logical_size(t, arg):
    """(rows, cols) of a stored operand; packed FP4 holds two values per byte along the last dimension."""
    if t.dim() != 2:
        raise ValueError(f"{arg}: expected a 2-D tensor, got {t.dim()}-D")
    if t.dtype in _FP8:
        return t.shape[0], t.shape[1]
    if t.dtype in _FP4:
        return t.shape[0], t.shape[1] * 2
    raise TypeError(f"{arg}: expected float8_e4m3fn, float8_e5m2 or packed FP4 (int8, uint8, float4_e2m1fn_x2), "
                    f"got {t.dtype}")


_UE8M0_DTYPES = tuple(t for t in (torch.uint8, getattr(torch, "float8_e8m0fnu", None), torch.int16, torch.int32)
                      if t is not None)


def required_scales(sf, mn, k, recipe_mn_k, arg, disable_ue8m0_cast, num_groups=None, rows=None):
    """Scale factors as the kernels take them; errors are reported against argument `arg`.

    Host kernels: `sf` itself, never copied (they read float32 and every UE8M0 form at any strides; the C++
    entry point checks dtypes and shapes); an MX recipe's values (float32 under gran_k 32, and UE8M0
    exponents) are checked in C++ in one pass over the scales, without a host sync. NPU kernels
    (runtime.on_npu_kernels): the Ascend layout of `transform_sf_into_required_layout`, built by torch ops
    on the scales' device. `rows` (utils.scale_rows.ScaleRows) limits both to the rows of a grouped layout
    whose outputs are defined: the values of the others are never an error and are converted as 0."""
    from .runtime import on_npu_kernels

    if isinstance(sf, torch.Tensor) and not on_npu_kernels(sf):
        if sf.dtype in _UE8M0_DTYPES or (sf.dtype == torch.float32 and recipe_mn_k[1] == MX_GRAN_K
                                          and not disable_ue8m0_cast):
            require_ue8m0_values(sf, arg, rows, recipe_mn_k[0])
        return sf
    from .utils.layout import transform_sf_into_required_layout

    try:
        return transform_sf_into_required_layout(sf, mn, k, recipe_mn_k, num_groups=num_groups,
                                                 disable_ue8m0_cast=disable_ue8m0_cast, rows=rows)
    except (TypeError, ValueError) as e:  # the transform names its input "sf": name the caller's argument
        msg = re.sub(r"\bsf(?=[:\[])", arg, str(e))
        raise type(e)(msg if msg.startswith(f"{arg}:") else f"{arg}: {msg}") from None


MX_GRAN_K = 32  # the 950 MX cube applies one UE8M0 scale per 32 K values


def npu_mx_scales(sf, k, gran_k):
    """(scales, gran_k) as the NPU kernels take them: on the NPU kernels (runtime.on_npu_kernels), packed
    UE8M0 scales of gran_k (128) K values become one scale per 32, each repeated (exact; a new tensor per
    call). Else unchanged."""
    from .runtime import on_npu_kernels

    if not on_npu_kernels(sf) or sf.dtype != torch.int16 or gran_k == MX_GRAN_K or gran_k % MX_GRAN_K:
        return sf, gran_k
    from .utils.layout import _ue8m0_regrouped

    return _ue8m0_regrouped(sf, k, gran_k, MX_GRAN_K), MX_GRAN_K


def _fp8_fp4_gemm(layout, a, b, d, c, recipe, recipe_a, recipe_b, disable_ue8m0_cast):
    (qa, sfa), (qb, sfb) = pair(a, "a"), pair(b, "b")
    ta, tb = layout[0] == "t", layout[1] == "n"  # the scales' orientation: the layout the caller named
    qa, la = kernel_operand(qa, layout[0])
    qb, lb = kernel_operand(qb, layout[1])
    ra, ca = logical_size(qa, "a")
    rb, cb = logical_size(qb, "b")
    m, k = (ca, ra) if la == "t" else (ra, ca)
    n, kb = (cb, rb) if lb == "n" else (rb, cb)
    if kb != k:
        raise ValueError(f"b: K mismatch: a {tuple(qa.shape)} has K={k} but b {tuple(qb.shape)} has K={kb} "
                         f"(layout {layout}; packed FP4 holds two values per byte)")
    (gm, gka), (gn, gkb) = recipes(recipe, recipe_a, recipe_b, sfb)
    # Scale factors travel in the orientation of their data: bring them to [rows, K blocks].
    sfa = required_scales(sfa.T if ta else sfa, m, k, (gm, gka), "sfa", disable_ue8m0_cast)
    sfb = required_scales(sfb.T if tb else sfb, n, k, (gn, gkb), "sfb", disable_ue8m0_cast)
    sfa, gka = npu_mx_scales(sfa, k, gka)
    sfb, gkb = npu_mx_scales(sfb, k, gkb)
    gm = 1 if sfa.dtype != torch.float32 else gm  # packed layouts hold one scale row per row
    gn = 1 if sfb.dtype != torch.float32 else gn
    _ops.check_tensors(a=qa, sfa=sfa, b=qb, sfb=sfb, d=d, c=c)
    c, c_is_d = _ops.split_acc(c, d)
    _ops.fp8_fp4_gemm(la + lb, qa, sfa, qb, sfb, d, c, c_is_d, gm, gka, gn, gkb)


def fp8_fp4_gemm_nt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk",
                    disable_ue8m0_cast=False):
    """D = C + (A * SFA) @ (B * SFB).T with a = (A [M, K], SFA) and b = (B [N, K], SFB).

    Operands: float8_e4m3fn (or e5m2), or FP4 e2m1 packed two per byte along the contiguous dimension, as
    upstream (int8, uint8 or torch.float4_e2m1fn_x2): a K-major FP4 [M, K] operand is stored [M, K/2]; an
    MN-major one is the `.T` view of a [K, M/2] tensor (``transpose_packed_fp4``), read as such.

    Scale factors: `recipe` (gran_m, gran_n, gran_k), or `recipe_a` (gran_m, gran_k_a) and `recipe_b`
    (gran_n, gran_k_b); default (1, 128, 128) for float32 SFB, else (1, 1, 128). gran_k is 32 (MX) or
    128. SFA is float32 [ceil(M/gran_m), ceil(K/gran_k_a)] (or UE8M0 packed, see
    `transform_sf_into_required_layout`), SFB likewise for N. With gran_k 32 float32 scales must be
    powers of two (they become UE8M0, as the 950 cube takes them) unless disable_ue8m0_cast=True
    keeps them float32. Each K block's product is promoted into the fp32 accumulator with its scales.

    d: bfloat16 or float32 [M, N], last dimension contiguous; c: optional, like d (may be d).
    M or N == 0 is a no-op; K == 0 writes C (or zeros); K need not be a multiple of gran_k.

    Raises:
        TypeError: wrong operand, scale or output dtypes; arguments that are not (tensor, scales) pairs.
        ValueError: shapes, mismatched K, scale shapes, unknown recipes, non-power-of-two scales under
            an MX recipe, output layout or aliasing. Nothing is written to d on error.
    """
    _fp8_fp4_gemm("nt", a, b, d, c, recipe, recipe_a, recipe_b, disable_ue8m0_cast)


def fp8_fp4_gemm_nn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk",
                    disable_ue8m0_cast=False):
    """As fp8_fp4_gemm_nt with b = (B [K, N], SFB [ceil(K/gran_k), ceil(N/gran_n)])."""
    _fp8_fp4_gemm("nn", a, b, d, c, recipe, recipe_a, recipe_b, disable_ue8m0_cast)


def fp8_fp4_gemm_tn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn",
                    disable_ue8m0_cast=False):
    """As fp8_fp4_gemm_nt with a = (A [K, M], SFA [K blocks, M]) and b = (B [K, N], SFB [K blocks, N])."""
    _fp8_fp4_gemm("tn", a, b, d, c, recipe, recipe_a, recipe_b, disable_ue8m0_cast)


def fp8_fp4_gemm_tt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn",
                    disable_ue8m0_cast=False):
    """As fp8_fp4_gemm_nt with a = (A [K, M], SFA [K blocks, M])."""
    _fp8_fp4_gemm("tt", a, b, d, c, recipe, recipe_a, recipe_b, disable_ue8m0_cast)


# Upstream aliases.
fp8_gemm_nt, fp8_gemm_nn, fp8_gemm_tn, fp8_gemm_tt = fp8_fp4_gemm_nt, fp8_fp4_gemm_nn, fp8_fp4_gemm_tn, fp8_fp4_gemm_tt


def fp8_gemm_nt_skip_head_mid(a, b, d, head_splits, recipe=None, compiled_dims="nk", disable_ue8m0_cast=False):
    """D = (A * SFA) @ (B * SFB).T written with a gap in every head: B's N rows are heads of left + right
    rows (head_splits = (left, mid, right)); the product's columns [0, left) of head h go to D columns
    h * (left + mid + right) + [0, left), its columns [left, left + right) to h * (left + mid + right) +
    left + mid + [0, right). D is [M, N + N / (left + right) * mid] (bfloat16 or float32, last dimension
    contiguous); its mid columns are not written.

    a = (A [M, K], SFA), b = (B [N, K], SFB): float8_e4m3fn with scales of 128 K values (`recipe`
    (gran_m, gran_n, 128), default (1, 128, 128) for float32 scales); B's gran_n must divide left and right.
    M == 0 is a no-op.

    Raises:
        TypeError: operand, scale or output dtypes; arguments that are not (tensor, scales) pairs.
        ValueError: shapes, head_splits that do not divide N, recipes, D's shape or layout. Nothing is
            written to d on error.
    """
    (qa, sfa), (qb, sfb) = pair(a, "a"), pair(b, "b")
    if not (isinstance(head_splits, (tuple, list)) and len(head_splits) == 3
            and all(isinstance(v, int) and v >= 0 for v in head_splits)):
        raise ValueError(f"head_splits: expected (left, mid, right) of non-negative ints, got {head_splits!r}")
    m, k = logical_size(qa, "a")
    n, _ = logical_size(qb, "b")
    (gm, gka), (gn, gkb) = recipes(recipe, None, None, sfb)
    if gka != 128:
        raise ValueError(f"recipe: fp8_gemm_nt_skip_head_mid takes scales of 128 K values, got gran_k {gka}")
    sfa = required_scales(sfa, m, k, (gm, gka), "sfa", disable_ue8m0_cast)
    sfb = required_scales(sfb, n, k, (gn, gkb), "sfb", disable_ue8m0_cast)
    gm = 1 if sfa.dtype != torch.float32 else gm  # packed layouts hold one scale row per row
    gn = 1 if sfb.dtype != torch.float32 else gn
    _ops.check_tensors(a=qa, sfa=sfa, b=qb, sfb=sfb, d=d)
    left, mid, right = head_splits
    _ops.fp8_gemm_nt_skip_head_mid(qa, sfa, qb, sfb, d, left, mid, right, gm, gka, gn, gkb)
