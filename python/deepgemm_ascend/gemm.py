"""Dense GEMMs: D = C + A @ B, with upstream DeepGEMM names and semantics."""
from . import _ops


def _bf16_gemm(layout, a, b, d, c):
    _ops.check_tensors(a=a, b=b, d=d, c=c)
    c, c_is_d = _ops.split_acc(c, d)
    _ops.bf16_gemm(layout, a, b, d, c, c_is_d)


def bf16_gemm_nt(a, b, d, c=None, compiled_dims="nk"):
    """D = C + A @ B.T with A [M, K] and B [N, K] in bfloat16.

    Args:
        a: bfloat16 [M, K], any strides.
        b: bfloat16 [N, K], any strides.
        d: output, bfloat16 or float32 [M, N], last dimension contiguous; written in place.
        c: optional accumulator with d's dtype and shape (may be d itself). With C the sum is
            rounded once: D = round(C + A @ B.T) in fp32.
        compiled_dims: accepted for upstream compatibility; no effect on the host backend.

    M == 0 or N == 0 is a no-op; K == 0 writes C (or zeros) to D.

    Raises:
        TypeError: a non-tensor argument or a wrong dtype (the message names the argument).
        ValueError: wrong rank or shape, mismatched K, a D whose last dimension is not contiguous,
            outputs overlapping inputs, tensors on different devices.
        RuntimeError: tensors on a device whose backend is not built.
    Nothing is written to d when an error is raised.
    """
    _bf16_gemm("nt", a, b, d, c)


def bf16_gemm_nn(a, b, d, c=None, compiled_dims="nk"):
    """D = C + A @ B with A [M, K] and B [K, N]; otherwise as bf16_gemm_nt."""
    _bf16_gemm("nn", a, b, d, c)


def bf16_gemm_tn(a, b, d, c=None, compiled_dims="mn"):
    """D = C + A.T @ B with A [K, M] and B [K, N]; otherwise as bf16_gemm_nt."""
    _bf16_gemm("tn", a, b, d, c)


def bf16_gemm_tt(a, b, d, c=None, compiled_dims="mn"):
    """D = C + A.T @ B.T with A [K, M] and B [N, K]; otherwise as bf16_gemm_nt."""
    _bf16_gemm("tt", a, b, d, c)
