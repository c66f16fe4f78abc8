"""Lightning-indexer MQA logits (DeepSeek-V3.2 sparse attention scoring), upstream names and layout."""
import torch

from . import _ops

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
    s, heads, skv = q_t.shape[0], q_t.shape[1], kv_t.shape[0]
    itemsize = torch.empty(0, dtype=logits_dtype).element_size()
    width = max_seqlen_k if max_seqlen_k > 0 else skv
    stride = _align(_align(max_seqlen_k, 256) if max_seqlen_k > 0 else skv + _NORMAL_PAD, _STRIDE_BYTES // itemsize)
    rows = _align(s, max(1, _ROW_GROUP_ROWS // heads)) if heads else s
    buf = torch.empty(rows, stride, dtype=logits_dtype, device=q_t.device)
    logits = buf[:s, :width]
    _ops.check_tensors(q=q_t, sfq=sfq, kv=kv_t, sfkv=sfkv, weights=weights, cu_seq_len_k_start=cu_seq_len_k_start,
                       cu_seq_len_k_end=cu_seq_len_k_end, logits=logits)
    _ops.fp8_fp4_mqa_logits(q_t, sfq, kv_t, sfkv, weights, cu_seq_len_k_start, cu_seq_len_k_end, logits,
                            bool(clean_logits), max_seqlen_k > 0)
    return logits


def fp8_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0):
    """Legacy FP8 interface: q is the FP8 tensor itself; float32 logits (see fp8_fp4_mqa_logits)."""
    return fp8_fp4_mqa_logits((q, None), kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits,
                              max_seqlen_k, torch.float32)


_SPLIT_KV = 256  # KV tokens per work unit of the paged schedule


def _lens_2d(context_lens, batch, next_n):
    """context_lens in the [B, next_n] form the kernels take. The older 1-D form [B] (upstream until
    7f2a703) holds the length of each request's last query row: row t of request b sees the positions
    p <= context_lens[b] - next_n + t, i.e. it has the length context_lens[b] - next_n + 1 + t, clamped at 0.
    A negative given length is kept as it is in all of its rows (the host path refuses it, the NPU
    kernels count it as 0). Tensor ops on context_lens' device: no host sync."""
    if not isinstance(context_lens, torch.Tensor) or context_lens.dim() != 1:
        return context_lens
    if context_lens.dtype != torch.int32:
        raise TypeError(f"context_lens: expected int32 lengths, got {context_lens.dtype}")
    if context_lens.shape[0] != batch:
        raise ValueError(f"context_lens: expected [B, next_n] = [{batch}, {next_n}] or the older [B] = [{batch}] "
                         f"form, got {list(context_lens.shape)}")
    given = context_lens[:, None]
    rows = torch.arange(next_n, dtype=torch.int32, device=context_lens.device)
    return torch.where(given < 0, given, (given - (next_n - 1) + rows).clamp(min=0))


def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, indices=None):
    """Schedule of the paged MQA kernel: int32 [num_sms + 1, 2], row s = (first request, first KV split)
    of AI core s, the last row a one-past-the-end sentinel. Work units are 256-token KV splits of each
    request's longest length, balanced by prefix sums; computed by tensor ops on context_lens' device,
    with no host sync on a device (CPU: a negative length raises ValueError; NPU: it counts as 0).
    Regenerate it after set_num_ai_cores: the paged call checks its shape against get_num_ai_cores(). The
    kernels walk every (request, page) themselves and do not read it. context_lens: int32 [B, next_n], or
    upstream's older [B] form (each request's last row's length, the longest of its rows: the schedule of
    the [B, next_n] lengths it stands for in fp8_fp4_paged_mqa_logits).
    """
    if (not isinstance(context_lens, torch.Tensor) or context_lens.dtype != torch.int32
            or context_lens.dim() not in (1, 2)):
        raise TypeError("context_lens: expected an int32 [B, next_n] tensor (or the older [B] form)")
    if context_lens.dim() == 1:
        context_lens = context_lens[:, None]
    if block_kv not in (32, 64):
        raise ValueError(f"block_kv: must be 32 or 64, got {block_kv!r}")
    if not isinstance(num_sms, int) or num_sms <= 0:
        raise ValueError(f"num_sms: expected a positive int, got {num_sms!r}")
    if indices is not None and (not isinstance(indices, torch.Tensor) or indices.dtype != torch.int32):
        raise TypeError("indices: expected an int32 tensor")
    dev, batch = context_lens.device, context_lens.shape[0]
    if dev.type == "cpu" and context_lens.numel() and int(context_lens.min()) < 0:
        raise ValueError(f"context_lens: lengths must be >= 0, got {int(context_lens.min())}")
    if batch == 0 or context_lens.shape[1] == 0:
        return torch.zeros(num_sms + 1, 2, dtype=torch.int32, device=dev)
    # Tensor ops on context_lens' device, no host sync: core s starts at unit ceil(total * s / num_sms).
    longest = context_lens.max(dim=1).values.long().clamp(min=0)
    ends = torch.cumsum((longest + _SPLIT_KV - 1) // _SPLIT_KV, 0)
    total = ends[-1]
    s = torch.arange(num_sms + 1, device=dev)
    unit = torch.where(s < num_sms, torch.minimum(total, (total * s + num_sms - 1) // num_sms), total)
    request = torch.searchsorted(ends, unit, right=True)
    start = torch.where(request > 0, ends[(request - 1).clamp(min=0)], torch.zeros_like(unit))
    split = torch.where(request < batch, unit - start, torch.zeros_like(unit))
    request = torch.where(total > 0, request, torch.zeros_like(request))
    return torch.stack([request, split], 1).to(torch.int32)


def fp8_fp4_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                             clean_logits=False, logits_dtype=torch.float32, indices=None):
    """MQA logits over a paged KV cache (upstream layout).

    q = (Q, SFQ): Q [B, next_n, H, D] float8_e4m3fn with SFQ None, or [B, next_n, H, D/2] packed e2m1 with
    SFQ [B, next_n, H] int32. kv_cache uint8 [num_blocks, block_kv, 1, D + 4] (or D/2 + 4): each block
    holds its block_kv value rows first, then block_kv 4-byte scales. weights [B * next_n, H] float32;
    context_lens int32 [B, next_n], or upstream's older [B] form (before 7f2a703): the length of each
    request's last row, row t then having the length context_lens[b] - next_n + 1 + t (clamped at 0; next_n
    1: the length itself); block_table int32 [B, max_blocks]; schedule_meta from
    get_paged_mqa_logits_metadata (shape checked against get_num_ai_cores()). Returns a view
    [B * next_n, max_context_len] of a buffer with row stride align(align(max_context_len, 256), 1024 /
    itemsize): row b * next_n + t holds sum_h relu(q . kv(p)) * w for p < context_lens[b, t]; -inf beyond
    with clean_logits, unspecified otherwise. indices (varlen, next_n 1): request id per token.
    """
    from .runtime import get_num_ai_cores

    if not (isinstance(q, (tuple, list)) and len(q) == 2):
        raise TypeError(f"q: expected a (tensor, scales or None) pair, got {type(q).__name__}")
    q_t, sfq = q
    if not isinstance(q_t, torch.Tensor) or q_t.dim() != 4:
        raise ValueError("q: expected a [B, next_n, H, D] tensor")
    if not isinstance(schedule_meta, torch.Tensor) or tuple(schedule_meta.shape) != (get_num_ai_cores() + 1, 2):
        raise ValueError(f"schedule_meta: expected shape ({get_num_ai_cores() + 1}, 2) from "
                         "get_paged_mqa_logits_metadata(..., num_sms=get_num_ai_cores())")
    if logits_dtype not in (torch.float32, torch.bfloat16):
        raise TypeError(f"logits_dtype: expected torch.float32 or torch.bfloat16, got {logits_dtype}")
    if not isinstance(max_context_len, int) or max_context_len < 0:
        raise ValueError(f"max_context_len: expected a non-negative int, got {max_context_len!r}")
    rows = q_t.shape[0] * q_t.shape[1]
    itemsize = torch.empty(0, dtype=logits_dtype).element_size()
    stride = _align(_align(max(max_context_len, 1), 256), _STRIDE_BYTES // itemsize)
    logits = torch.empty(rows, stride, dtype=logits_dtype, device=q_t.device)[:, :max_context_len]
    context_lens = _lens_2d(context_lens, q_t.shape[0], q_t.shape[1])
    _ops.check_tensors(q=q_t, sfq=sfq, kv_cache=kv_cache, weights=weights, context_lens=context_lens,
                       block_table=block_table, logits=logits, indices=indices)
    _ops.fp8_fp4_paged_mqa_logits(q_t, sfq, kv_cache, weights, context_lens, block_table, logits,
                                  bool(clean_logits), indices)
    return logits


def fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                         clean_logits=False, indices=None):
    """Legacy FP8 interface: q is the FP8 tensor itself; float32 logits (context_lens [B, next_n] or the older
    [B]: see fp8_fp4_paged_mqa_logits)."""
    return fp8_fp4_paged_mqa_logits((q, None), kv_cache, weights, context_lens, block_table, schedule_meta,
                                    max_context_len, clean_logits, torch.float32, indices)
