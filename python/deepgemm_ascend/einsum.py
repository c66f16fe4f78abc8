"""BF16 einsum expressions of upstream DeepGEMM."""
from . import _C
from ._tensor import desc, optional_desc


def einsum(expr, a, b, d, c=None, use_cublaslt=False):
    """d = einsum(expr, a, b) (+ c) for the expressions upstream supports, in bfloat16 with fp32 accumulation.

    'bhr,hdr->bhd' and 'bhd,hdr->bhr': a, b, d bfloat16 with a unit last stride (other strides free),
    c must be None. 'bmk,bnk->mn': a [S, M, K], b [S, N, K]; a float32 d accumulates (pass c = d), a
    bfloat16 d takes no c. use_cublaslt is accepted for compatibility and has no effect.
    Raises ValueError for other expressions, shapes or strides and TypeError for dtypes.
    """
    if not isinstance(expr, str):
        raise TypeError(f"expr: expected a string, got {type(expr).__name__}")
    _C.einsum(expr.replace(" ", ""), desc(a, "a"), desc(b, "b"), desc(d, "d"), optional_desc(c, "c"))
