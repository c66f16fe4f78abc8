"""Upstream's cuBLASLt GEMMs, the vendor-BLAS baseline its tests compare against: here torch's matmul on
the tensors' device (oneDNN / MKL on the CPU; on an `npu` tensor torch_npu's matmul, i.e. CANN's). Not a
kernel of this package: a reference point with upstream's argument checks."""
import torch

_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
_FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)  # unscaled FP8 (upstream: cuBLASLt's FP8 GEMM with unit scales)


def _check(a, b, d, c, layout):
    for t, arg in ((a, "a"), (b, "b"), (d, "d")):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{arg}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{arg}: expected a 2-D tensor, got {t.dim()}-D")
        if t.dtype not in _DTYPES + (_FP8 if arg != "d" else ()):
            raise TypeError(f"{arg}: expected bfloat16, float16 or float32{', or FP8' if arg != 'd' else ''}, "
                            f"got {t.dtype}")
    if a.dtype != b.dtype:
        raise TypeError(f"b: expected a's dtype {a.dtype}, got {b.dtype}")
    m, k = (a.shape[1], a.shape[0]) if layout[0] == "t" else tuple(a.shape)
    n, kb = (b.shape[1], b.shape[0]) if layout[1] == "n" else tuple(b.shape)
    if kb != k:
        raise ValueError(f"b: K mismatch: a {tuple(a.shape)} has K={k} but b {tuple(b.shape)} has K={kb}")
    if tuple(d.shape) != (m, n):
        raise ValueError(f"d: expected shape ({m}, {n}), got {tuple(d.shape)}")
    if c is not None:
        if not isinstance(c, torch.Tensor) or tuple(c.shape) != (m, n):
            raise ValueError(f"c: expected a tensor of shape ({m}, {n})")
    devices = {t.device for t in (a, b, d, c) if t is not None}
    if len(devices) != 1:
        raise ValueError(f"d: tensors on different devices: {sorted(map(str, devices))}")


def _gemm(layout, a, b, d, c):
    _check(a, b, d, c, layout)
    x = a.T if layout[0] == "t" else a
    y = b if layout[1] == "n" else b.T
    if d.dtype == x.dtype and c is None:  # never FP8: d is not
        torch.matmul(x, y, out=d) if d.is_contiguous() else d.copy_(torch.matmul(x, y))
        return
    r = torch.matmul(x.float(), y.float())
    if c is not None:
        r += c.float()
    d.copy_(r)


def cublaslt_gemm_nt(a, b, d, c=None):
    """D = C + A @ B.T (A [M, K], B [N, K]) by torch's matmul on the tensors' device; see the module."""
    _gemm("nt", a, b, d, c)


def cublaslt_gemm_nn(a, b, d, c=None):
    """D = C + A @ B (B [K, N]) by torch's matmul; see cublaslt_gemm_nt."""
    _gemm("nn", a, b, d, c)


def cublaslt_gemm_tn(a, b, d, c=None):
    """D = C + A.T @ B (A [K, M], B [K, N]) by torch's matmul; see cublaslt_gemm_nt."""
    _gemm("tn", a, b, d, c)


def cublaslt_gemm_tt(a, b, d, c=None):
    """D = C + A.T @ B.T (A [K, M], B [N, K]) by torch's matmul; see cublaslt_gemm_nt."""
    _gemm("tt", a, b, d, c)
