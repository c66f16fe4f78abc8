"""HyperConnection pre-norm GEMM (upstream tf32_hc_prenorm_gemm)."""
from . import _ops


def tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None):
    """d = a @ b.T and sqr_sum = sum(a * a, -1), optionally split along K.

    b is multiplied as two bfloat16 terms, hi = bf16(b) and lo = bf16(b - hi) (round to nearest even):
    16 significant bits of b, more than upstream's TF32 (11), exact products, float32 accumulation.
    a: bfloat16 [M, K], b: float32 [N, K], both K-major; K % 64 == 0, N % 8 == 0, N <= 128. Without
    num_splits: d float32 [M, N], sqr_sum float32 [M].
    With num_splits S: the K/64 blocks are split as evenly as possible (the first (K/64) % S splits get
    one more), d is [S, M, N] and sqr_sum [S, M], and the caller sums over S. M == 0 is a no-op.
    Raises TypeError / ValueError naming the argument; nothing is written on error.
    """
    _ops.check_tensors(a=a, b=b, d=d, sqr_sum=sqr_sum)
    _ops.tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits)
