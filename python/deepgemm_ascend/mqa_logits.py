"""Lightning-indexer MQA logits (DeepSeek-V3.2 sparse attention scoring), upstream names and layout."""
import torch

from . import _C
from ._tensor import desc, optional_desc

_ROW_GROUP_ROWS = 128     # rows allocated in multiples of 128 / H, as upstream
_STRIDE_BYTES = 1024      # row stride aligned to 1024 bytes
_NORMAL_PAD = 256         # normal mode: stride covers SKV + 256


def _align(x, y):
    return (x + y - 1) // y * y


def fp8_fp4_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0,
                       logits_dtype=torch.float32):
    """logits[i, j] = sum_h relu(q(i, h) . kv(j)) * weights[i, h] for cu_seq_len_k_start[i] <= j < cu_seq_len_k_end[i].

    q = (Q, SFQ): FP8 mode with SFQ None (Q [S, H, D] float8_e4m3fn, no scale); FP4 mode with Q [S, H, D/2]
    packed e2m1 (int8 / uint8 / float4_e2m1fn_x2) and SFQ [S, H] int32 (4 UE8M0 bytes per row, one per 32
    of D). kv = (KV, SFKV): FP8 [SKV, D] with SFKV [SKV] float32 (any positive value, applied after the
    head sum), or FP4 [SKV, D/2] with SFKV [SKV] int32. weights [S, H] float32 (bfloat16 only with
    bfloat16 logits). The ranges are absolute KV rows (int32 [S], 0 <= start <= end <= SKV).

    Returns a strided view [S, SKV] into a buffer of row stride align(SKV + 256, 1024 / itemsize) (upstream's
    layout; honour the stride). With clean_logits, entries outside each row's range are -inf. With
    max_seqlen_k > 0 (compressed mode, clean_logits must be False) row i holds its range at columns
    [0, end - start) of a [S, max_seqlen_k] view; other entries are unspecified.
    Results are bitwise deterministic. Raises TypeError / ValueError naming the argument.
    """
    if not (isinstance(q, (tuple, list)) and len(q) == 2):
        raise TypeError(f"q: expected a (tensor, scales or None) pair, got {type(q).__name__}")
    if not (isinstance(kv, (tuple, list)) and len(kv) == 2):
        raise TypeError(f"kv: expected a (tensor, scales) pair, got {type(kv).__name__}")
    (q_t, sfq), (kv_t, sfkv) = q, kv
    for t, arg in ((q_t, "q"), (kv_t, "kv"), (weights, "weights")):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{arg}: expected a torch.Tensor, got {type(t).__name__}")
    if q_t.dim() != 3:
        raise ValueError(f"q: expected [S, H, D], got {q_t.dim()}-D")
    if logits_dtype not in (torch.float32, torch.bfloat16):
        raise TypeError(f"logits_dtype: expected torch.float32 or torch.bfloat16, got {logits_dtype}")
    if not isinstance(max_seqlen_k, int) or max_seqlen_k < 0:
        raise ValueError(f"max_seqlen_k: expected a non-negative int, got {max_seqlen_k!r}")
    if max_seqlen_k > 0 and clean_logits:
        raise ValueError("clean_logits: must be False in compressed mode (max_seqlen_k > 0)")
    s, heads, skv = q_t.shape[0], q_t.shape[1], kv_t.shape[0]
    itemsize = torch.empty(0, dtype=logits_dtype).element_size()
    width = max_seqlen_k if max_seqlen_k > 0 else skv
    stride = _align(_align(max_seqlen_k, 256) if max_seqlen_k > 0 else skv + _NORMAL_PAD, _STRIDE_BYTES // itemsize)
    rows = _align(s, max(1, _ROW_GROUP_ROWS // heads)) if heads else s
    buf = torch.empty(rows, stride, dtype=logits_dtype, device=q_t.device)
    logits = buf[:s, :width]
    _C.fp8_fp4_mqa_logits(desc(q_t, "q"), optional_desc(sfq, "sfq"), desc(kv_t, "kv"), desc(sfkv, "sfkv"),
                          desc(weights, "weights"), desc(cu_seq_len_k_start, "cu_seq_len_k_start"),
                          desc(cu_seq_len_k_end, "cu_seq_len_k_end"), desc(logits, "logits"), bool(clean_logits),
                          max_seqlen_k > 0)
    return logits


def fp8_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0):
    """Legacy FP8 interface: q is the FP8 tensor itself; float32 logits (see fp8_fp4_mqa_logits)."""
    return fp8_fp4_mqa_logits((q, None), kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits,
                              max_seqlen_k, torch.float32)
