"""BF16 einsum expressions of upstream DeepGEMM."""
from . import _ops


def einsum(expr, a, b, d, c=None, use_cublaslt=False):
    """d = einsum(expr, a, b) (+ c) for the expressions upstream supports, in bfloat16 with fp32 accumulation.

    'bhr,hdr->bhd' and 'bhd,hdr->bhr': a, b, d bfloat16 with a unit last stride (other strides free),
    c must be None. 'bmk,bnk->mn': a [S, M, K], b [S, N, K]; a float32 d accumulates (pass c = d), a
    bfloat16 d takes no c. use_cublaslt is accepted for compatibility and has no effect.
    Raises ValueError for other expressions, shapes or strides and TypeError for dtypes.
    """
    if not isinstance(expr, str):
        raise TypeError(f"expr: expected a string, got {type(expr).__name__}")
    _ops.check_tensors(a=a, b=b, d=d, c=c)
    c, c_is_d = _ops.split_acc(c, d)
    _ops.einsum(expr.replace(" ", ""), a, b, d, c, c_is_d)


def fp8_einsum(expr, a, b, d, c=None, recipe=(1, 128, 128)):
    """FP8 einsum, batched over heads, with float32 block scales (upstream's three expressions).

    a = (A, SFA), b = (B, SFB) with float8_e4m3fn tensors; recipe (gran_m, gran_n, gran_k):
      'bhr,hdr->bhd': SFA [b, h, ceil(r / gran_k)], SFB [h, ceil(d / gran_n), ceil(r / gran_k)]
      'bhd,hdr->bhr': SFA [b, h, ceil(d / gran_k)], SFB [h, ceil(d / gran_k), ceil(r / gran_n)]
      'bhd,bhr->hdr': contraction over b with per-channel scales (recipe (1, 1, 128)): SFA
                      [ceil(b / gran_k), h, d], SFB [ceil(b / gran_k), h, r]; d float32 with c = d.
    d bfloat16 or float32; c optional, like d. Raises TypeError / ValueError naming the argument.
    """
    if not isinstance(expr, str):
        raise TypeError(f"expr: expected a string, got {type(expr).__name__}")
    for x, arg in ((a, "a"), (b, "b")):
        if not (isinstance(x, (tuple, list)) and len(x) == 2):
            raise TypeError(f"{arg}: expected a (tensor, scale factors) pair, got {type(x).__name__}")
    if not (isinstance(recipe, (tuple, list)) and len(recipe) == 3 and all(isinstance(v, int) for v in recipe)):
        raise ValueError(f"recipe: expected (gran_m, gran_n, gran_k), got {recipe!r}")
    (qa, sfa), (qb, sfb) = a, b
    _ops.check_tensors(a=qa, sfa=sfa, b=qb, sfb=sfb, d=d, c=c)
    c, c_is_d = _ops.split_acc(c, d)
    _ops.fp8_einsum(expr.replace(" ", ""), qa, sfa, qb, sfb, d, c, c_is_d, *recipe)
