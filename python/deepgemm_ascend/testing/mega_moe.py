"""Mega MoE test and benchmark helpers: inputs as upstream's test makes them, the unfused pipeline
built from the library's own kernels (all_to_all dispatch, grouped GEMMs, the SwiGLU stage, combine),
and a float64 reference.

Every rank builds the inputs of every rank from one seed, so each process can compute the reference
for its own tokens without exchanging weights.
"""
from dataclasses import dataclass, replace

import torch

from .. import _C
from ..grouped_gemm import m_grouped_bf16_gemm_nt_contiguous, m_grouped_fp8_fp4_gemm_nt_contiguous
from ..mega import swiglu_quant, transform_weights_for_mega_moe
from ..utils.math import align, cast_back_from_fp4, per_token_cast_to_fp4, per_token_cast_to_fp8, unpack_ue8m0_from_int

_GRAN = 32


@dataclass
class RankInputs:
    x: torch.Tensor             # bf16 [T, H] (original values)
    x_q: torch.Tensor           # FP8 [T, H] (or bf16 on the BF16 path)
    x_sf: torch.Tensor          # int32 [T, H/128] or None
    topk_idx: torch.Tensor      # int64 [T, topk], -1 = unused
    topk_weights: torch.Tensor  # float32 [T, topk]


@dataclass
class Weights:
    l1: object  # transformed (W1, SF1) or W1, local experts only
    l2: object
    l1_plain: object  # untransformed, local experts (for the unfused pipeline)
    w1_f64: torch.Tensor  # dequantised [E_total, 2I, H] float64
    w2_f64: torch.Tensor  # [E_total, H, I]


HUGE_BLOCK = 2.0 ** 105  # a weight block this large gets a UE8M0 scale outside the host's fold window


def make_weights(num_experts, hidden, inter, rank, world, fp8=True, seed=0, huge_expert=None):
    """All experts' weights (randn bf16, FP4 per 32 with UE8M0 scales on the FP8 path); this rank's
    experts in the kernel's form, and every expert dequantised in float64 for the reference.
    huge_expert: an expert whose W1 row 0 values [0, 32) and W2 row 0 values [32, 64) are HUGE_BLOCK times
    larger: some of its weight scales, and without an activation clamp some of its activation scales, then lie
    outside the host's fold window, so that its GEMMs promote while the other experts' fold."""
    g = torch.Generator().manual_seed(seed)
    w1 = torch.randn(num_experts, 2 * inter, hidden, generator=g).bfloat16()
    w2 = torch.randn(num_experts, hidden, inter, generator=g).bfloat16()
    if huge_expert is not None:
        w1[huge_expert, 0, :_GRAN] *= HUGE_BLOCK
        w2[huge_expert, 0, _GRAN:2 * _GRAN] *= HUGE_BLOCK  # not the columns row 0 of W1 makes huge
    e_local = num_experts // world
    mine = slice(rank * e_local, (rank + 1) * e_local)
    if not fp8:
        l1, l2 = transform_weights_for_mega_moe(w1[mine].contiguous(), w2[mine].contiguous())
        return Weights(l1, l2, w1[mine].contiguous(), w1.double(), w2.double())

    def quant(w):
        parts = [per_token_cast_to_fp4(w[e], use_ue8m0=True, gran_k=_GRAN, use_packed_ue8m0=True)
                 for e in range(w.size(0))]
        q = torch.stack([p[0] for p in parts])
        sf = torch.stack([p[1] for p in parts])
        deq = torch.stack([cast_back_from_fp4(q[e], sf[e], _GRAN, True) for e in range(w.size(0))])
        return q, sf, deq.double()

    q1, sf1, d1 = quant(w1)
    q2, sf2, d2 = quant(w2)
    plain1 = (q1[mine].contiguous(), sf1[mine].contiguous())
    l1, l2 = transform_weights_for_mega_moe(plain1, (q2[mine].contiguous(), sf2[mine].contiguous()))
    return Weights(l1, l2, plain1, d1, d2)


def make_rank_inputs(num_tokens, hidden, num_experts, topk, rank, fp8=True, masked_ratio=0.0, skew=0.0,
                     skip_rank=None, world=1, seed=0):
    """Tokens and routing of one rank: x randn bf16 (FP8 per 32 with packed UE8M0 scales), the topk
    largest of randn scores as experts (raw scores as weights), masked_ratio of slots set to -1.
    skew > 0 biases routing towards low expert ids (uneven load); skip_rank excludes one rank's
    experts, so that rank receives nothing."""
    g = torch.Generator().manual_seed(seed * 1000 + rank + 1)
    x = torch.randn(num_tokens, hidden, generator=g).bfloat16()
    scores = torch.randn(num_tokens, num_experts, generator=g)
    if skew:
        scores += skew * torch.linspace(1.0, 0.0, num_experts)
    if skip_rank is not None:
        e_local = num_experts // world
        scores[:, skip_rank * e_local:(skip_rank + 1) * e_local] = -float("inf")
    weights, idx = scores.topk(topk, dim=1, largest=True, sorted=False)
    idx = idx.masked_fill(weights == -float("inf"), -1)  # fewer eligible experts than slots
    if masked_ratio:
        mask = torch.rand(num_tokens, topk, generator=g) < masked_ratio
        idx = idx.masked_fill(mask, -1)
    weights = weights.float().masked_fill(idx < 0, 0.0)
    if fp8:
        x_q, x_sf = per_token_cast_to_fp8(x, use_ue8m0=True, gran_k=_GRAN, use_packed_ue8m0=True)
    else:
        x_q, x_sf = x, None
    return RankInputs(x, x_q, x_sf, idx.long(), weights.contiguous())


def fill_buffer(buf, inp):
    """Copies one rank's inputs into its symmetric buffer views."""
    t = inp.topk_idx.size(0)
    buf.x[:t].copy_(inp.x_q)
    if inp.x_sf is not None:
        buf.x_sf[:t].copy_(inp.x_sf)
    buf.topk_idx[:t].copy_(inp.topk_idx)
    buf.topk_weights[:t].copy_(inp.topk_weights)


def _dequant_x(inp):
    if inp.x_sf is None:
        return inp.x_q.double()
    sf = unpack_ue8m0_from_int(inp.x_sf).double()  # [T, H/32]
    t, h = inp.x_q.shape
    return (inp.x_q.double().view(t, h // _GRAN, _GRAN) * sf[:, :h // _GRAN].unsqueeze(-1)).view(t, h)


def reference_fp64(inp, weights, num_experts, activation_clamp=None):
    """y [T, H] float64 for one rank's tokens: exact math on the dequantised inputs (no intermediate
    rounding, no re-quantisation)."""
    x = _dequant_x(inp)
    t_count, topk = inp.topk_idx.shape
    inter = weights.w2_f64.size(2)
    y = torch.zeros(t_count, x.size(1), dtype=torch.float64)
    c = float("inf") if activation_clamp is None else activation_clamp
    for t in range(t_count):
        for k in range(topk):
            e = int(inp.topk_idx[t, k])
            if e < 0:
                continue
            h = weights.w1_f64[e] @ x[t]
            gate, up = h[:inter].clamp(max=c), h[inter:].clamp(-c, c)
            act = gate * torch.sigmoid(gate) * up * float(inp.topk_weights[t, k])
            y[t] += weights.w2_f64[e] @ act
    return y


def _all_to_all(tensor, send_counts, recv_counts, group):
    """Rows of `tensor` split by send_counts -> rows received, split by recv_counts (any dtype)."""
    import torch.distributed as dist

    row_bytes = tensor.element_size() * int(torch.Size(tensor.shape[1:]).numel())
    raw = tensor.contiguous().view(torch.uint8).reshape(tensor.size(0), row_bytes)
    out = torch.empty(int(sum(recv_counts)), row_bytes, dtype=torch.uint8)
    dist.all_to_all_single(out, raw, output_split_sizes=list(recv_counts), input_split_sizes=list(send_counts),
                           group=group)
    return out.view(tensor.dtype).view((-1,) + tuple(tensor.shape[1:]))


def unfused_mega_moe(inp, weights, num_experts, group=None, activation_clamp=None, fp8=True):
    """The unfused pipeline: dispatch with all_to_all, M-grouped contiguous GEMM (psum layout, recipe
    (1, 1, 32)), the SwiGLU stage, the second grouped GEMM, all_to_all back, combine in slot order in
    fp32. Returns (y bf16 [T, H], per-local-expert receive counts int32 [E])."""
    rank, world = (0, 1) if group is None else (group.rank(), group.size())
    e_local = num_experts // world
    topk_idx = inp.topk_idx
    t_idx, k_idx = (topk_idx >= 0).nonzero(as_tuple=True)  # (token, slot) in ascending order
    expert = topk_idx[t_idx, k_idx]
    order = torch.argsort(expert // e_local, stable=True)
    t_idx, k_idx, expert = t_idx[order], k_idx[order], expert[order]
    send = torch.bincount(expert // e_local, minlength=world)
    payload = [inp.x_q[t_idx], inp.topk_weights[t_idx, k_idx], (expert % e_local)]
    if fp8:
        payload.append(inp.x_sf[t_idx])
    if world > 1:
        import torch.distributed as dist
        recv = torch.empty_like(send)
        dist.all_to_all_single(recv, send, group=group)
        send_l, recv_l = send.tolist(), recv.tolist()
        payload = [_all_to_all(p, send_l, recv_l, group) for p in payload]
    else:
        send_l = recv_l = send.tolist()
    x_r, w_r, e_r = payload[:3]
    sf_r = payload[3] if fp8 else None

    # Group the received rows by local expert into the psum layout.
    by_expert = torch.argsort(e_r, stable=True)
    counts = torch.bincount(e_r, minlength=e_local)
    alignment = _C.get_mk_alignment_for_contiguous_layout()
    starts, ends, at = [], [], 0
    for c in counts.tolist():
        at = align(at, alignment)
        starts.append(at)
        at += c
        ends.append(at)
    m = max(align(at, alignment), alignment)
    rows = torch.cat([torch.arange(s, e) for s, e in zip(starts, ends)]) if at else torch.zeros(0, dtype=torch.long)
    ends_t = torch.tensor(ends, dtype=torch.int32)
    inter = weights.l2[0].size(2) * 2 if fp8 else weights.l2.size(2)
    hidden = inp.x.size(1)

    a = torch.zeros(m, hidden, dtype=x_r.dtype)
    a[rows] = x_r[by_expert]
    wts = torch.zeros(m, dtype=torch.float32)
    wts[rows] = w_r[by_expert]
    h = torch.empty(m, 2 * inter, dtype=torch.bfloat16)
    o = torch.empty(m, hidden, dtype=torch.bfloat16)
    if fp8:
        sfa = torch.full((m, hidden // 128), 0x7F7F7F7F, dtype=torch.int32)
        sfa[rows] = sf_r[by_expert]
        m_grouped_fp8_fp4_gemm_nt_contiguous((a, sfa), weights.l1_plain, h, ends_t, use_psum_layout=True,
                                             recipe=(1, 1, 32))
        act, act_sf = swiglu_quant(h, wts, activation_clamp, use_fp8=True, interleaved=False)
        m_grouped_fp8_fp4_gemm_nt_contiguous((act, act_sf), weights.l2, o, ends_t, use_psum_layout=True,
                                             recipe=(1, 1, 32))
    else:
        m_grouped_bf16_gemm_nt_contiguous(a, weights.l1_plain, h, ends_t, use_psum_layout=True)
        act, _ = swiglu_quant(h, wts, activation_clamp, use_fp8=False, interleaved=False)
        m_grouped_bf16_gemm_nt_contiguous(act, weights.l2, o, ends_t, use_psum_layout=True)

    out_r = torch.empty(x_r.size(0), hidden, dtype=torch.bfloat16)
    out_r[by_expert] = o[rows]
    back = _all_to_all(out_r, recv_l, send_l, group) if world > 1 else out_r
    acc = torch.zeros(topk_idx.size(0), hidden, dtype=torch.float32)
    for k in range(topk_idx.size(1)):
        sel = k_idx == k
        acc[t_idx[sel]] += back[sel].float()
    return acc.bfloat16(), counts.int()


# ------------------------------------------------------------------------------------------------
# per-rank functions for deepgemm_ascend.testing.distributed.run_ranks

@dataclass
class Scenario:
    num_experts: int = 16
    hidden: int = 256
    inter: int = 128
    topk: int = 6
    tokens: tuple = (40,)        # tokens per rank (cycled over the ranks)
    masked_ratio: float = 0.0
    skew: float = 0.0
    skip_rank: int = None
    fp8: bool = True
    clamp: float = None
    calls: int = 2                # repeated calls with fresh inputs on the same buffer
    huge_expert: int = None       # make_weights' huge_expert
    widened: bool = False         # the NPU kernels take the FP4 weights widened to e4m3 by the transform


def _fused(buf, weights, inp, y, stats, clamp, fp8):
    from ..mega import bf16_mega_moe, fp8_fp4_mega_moe
    fill_buffer(buf, inp)
    fn = fp8_fp4_mega_moe if fp8 else bf16_mega_moe
    fn(y, weights.l1, weights.l2, buf, cumulative_local_expert_recv_stats=stats, activation_clamp=clamp)


def check_rank(rank, world, group, scenarios):
    """Fused vs unfused (bitwise, y and stats) and vs the float64 reference, per scenario and call."""
    from ..mega import get_symm_buffer_for_mega_moe
    from .numeric import calc_diff

    report = []
    for sc in scenarios:
        t = sc.tokens[rank % len(sc.tokens)]
        buf = get_symm_buffer_for_mega_moe(group, sc.num_experts, max(sc.tokens), sc.topk, sc.hidden, sc.inter,
                                           mma_type="fp8xfp4" if sc.fp8 else "bf16xbf16")
        weights = make_weights(sc.num_experts, sc.hidden, sc.inter, rank, world, fp8=sc.fp8, huge_expert=sc.huge_expert)
        stats = torch.zeros(sc.num_experts // world, dtype=torch.int32)
        stats_ref = torch.zeros_like(stats)
        for call in range(sc.calls):
            inp = make_rank_inputs(t, sc.hidden, sc.num_experts, sc.topk, rank, fp8=sc.fp8,
                                   masked_ratio=sc.masked_ratio, skew=sc.skew, skip_rank=sc.skip_rank, world=world,
                                   seed=call)
            y = torch.full((t, sc.hidden), float("nan"), dtype=torch.bfloat16)
            _fused(buf, weights, inp, y, stats, sc.clamp, sc.fp8)
            y_ref, counts = unfused_mega_moe(inp, weights, sc.num_experts, group if world > 1 else None, sc.clamp,
                                             sc.fp8)
            stats_ref += counts
            ref = reference_fp64(inp, weights, sc.num_experts, sc.clamp)
            report.append({
                "scenario": sc, "call": call, "tokens": t, "received": int(counts.sum()),
                "equal": torch.equal(y, y_ref), "max_abs": (y.float() - y_ref.float()).abs().max().item() if t else 0.0,
                "stats_equal": torch.equal(stats, stats_ref), "diff": float(calc_diff(y.double(), ref)) if t else 0.0,
                "finite": bool(torch.isfinite(y).all()),
            })
        buf.destroy()
    return report


def failing_rank(rank, world, group, victim, mode, timeout_s):
    """One rank (victim) exits, hangs or passes a bad argument at the first call; the others must
    raise an error naming it. Returns (error type name, message, seconds waited) for survivors."""
    import os
    import time

    from ..mega import get_symm_buffer_for_mega_moe

    os.environ["DGA_COMM_TIMEOUT_S"] = str(timeout_s)
    sc = Scenario(tokens=(8,))
    buf = get_symm_buffer_for_mega_moe(group, sc.num_experts, 8, sc.topk, sc.hidden, sc.inter)
    weights = make_weights(sc.num_experts, sc.hidden, sc.inter, rank, world)
    inp = make_rank_inputs(8, sc.hidden, sc.num_experts, sc.topk, rank)
    y = torch.empty(8, sc.hidden, dtype=torch.bfloat16)
    if rank == victim:
        if mode == "exit":
            os._exit(3)
        if mode == "hang":
            time.sleep(timeout_s + 4)
            return ("victim", "", 0.0)
        y = torch.empty(8, sc.hidden + 128, dtype=torch.bfloat16)  # mode "bad_arg"
    start = time.monotonic()
    try:
        _fused(buf, weights, inp, y, None, None, True)
    except Exception as e:  # noqa: BLE001 - the error is the result
        return (type(e).__name__, str(e), time.monotonic() - start)
    return ("no error", "", time.monotonic() - start)


def check_rank_on_npu_model(rank, world, group, sc, num_ring_tokens):
    """Mega MoE (BF16, or FP8 x FP4 with sc.fp8) on the NPU kernels (the instruction model) and on the host,
    on buffers of the same layout: per call, calc_diff of the model's y against the host's and against the
    float64 reference, whether it is finite, and whether the receive statistics agree."""
    from .. import runtime
    from ..mega import SymmBuffer
    from .numeric import calc_diff

    t = sc.tokens[rank % len(sc.tokens)]
    n = align(max(sc.tokens), _C.get_token_alignment_for_mega_moe())
    weights = make_weights(sc.num_experts, sc.hidden, sc.inter, rank, world, fp8=sc.fp8)
    ys, stats = {}, {}
    before = runtime.get_backend()
    try:
        for backend in ("host", "npu-model"):
            runtime.set_backend(backend)
            if backend == "npu-model" and sc.widened:  # the transform's NPU form: e4m3 weights
                l1, l2 = transform_weights_for_mega_moe(weights.l1_plain, weights.l2)
                assert l1[0].dtype == l2[0].dtype == torch.float8_e4m3fn
                weights = replace(weights, l1=l1, l2=l2)
            buf = SymmBuffer(group, sc.num_experts, n, sc.topk, sc.hidden, sc.inter, num_ring_tokens,
                             "fp8xfp4" if sc.fp8 else "bf16xbf16")
            stats[backend] = torch.zeros(sc.num_experts // world, dtype=torch.int32)
            for call in range(sc.calls):
                inp = make_rank_inputs(t, sc.hidden, sc.num_experts, sc.topk, rank, fp8=sc.fp8,
                                       masked_ratio=sc.masked_ratio, skew=sc.skew, world=world, seed=call)
                y = torch.full((t, sc.hidden), float("nan"), dtype=torch.bfloat16)
                _fused(buf, weights, inp, y, stats[backend], sc.clamp, sc.fp8)
                ys[backend, call] = (y, inp)
            buf.destroy()
    finally:
        runtime.set_backend(before)
    report = []
    for call in range(sc.calls):
        (y_host, _), (y, inp) = ys["host", call], ys["npu-model", call]
        ref = reference_fp64(inp, weights, sc.num_experts, sc.clamp)
        report.append({"call": call, "tokens": t, "finite": bool(torch.isfinite(y).all()),
                       "diff_host": float(calc_diff(y.double(), y_host.double())) if t else 0.0,
                       "diff_ref": float(calc_diff(y.double(), ref)) if t else 0.0,
                       "stats_equal": torch.equal(stats["host"], stats["npu-model"])})
    return report


def late_rank_on_npu_model(rank, world, group, victim, timeout_s):
    """BF16 Mega MoE on the NPU kernels (the instruction model) where rank `victim` never calls: the
    others' dispatch barrier gives up. Returns (error type name, message) for the others."""
    import os
    import time

    from .. import runtime
    from ..mega import SymmBuffer, bf16_mega_moe

    os.environ["DGA_COMM_TIMEOUT_S"] = str(timeout_s)
    sc = Scenario(num_experts=4 * world, topk=2, tokens=(8,), fp8=False)
    buf = SymmBuffer(group, sc.num_experts, 384, sc.topk, sc.hidden, sc.inter, 384 * world, "bf16xbf16")
    weights = make_weights(sc.num_experts, sc.hidden, sc.inter, rank, world, fp8=sc.fp8)
    fill_buffer(buf, make_rank_inputs(8, sc.hidden, sc.num_experts, sc.topk, rank, fp8=False, world=world))
    if rank == victim:  # never calls; its buffer stays mapped in the others
        time.sleep(2)
        return ("victim", "")
    runtime.set_backend("npu-model")
    try:
        bf16_mega_moe(torch.empty(8, sc.hidden, dtype=torch.bfloat16), weights.l1, weights.l2, buf)
    except Exception as e:  # noqa: BLE001 - the error is the result
        return (type(e).__name__, str(e))
    finally:
        runtime.set_backend("host")
    return ("no error", "")


class FakeIpc:
    """Stands in for _C's ACL IPC calls where no NPU is (the buffer-sharing protocol's test): a key names
    its exporter, an import returns 0x1000 + the exporter's rank, and every close is appended to a log that
    the ranks share. fail: the call ("export" or "import") that raises on this rank."""

    def __init__(self, rank, log_path, fail=None):
        self.rank, self.log_path, self.fail, self.exports = rank, log_path, fail, []

    def _log(self, line):
        with open(self.log_path, "a") as f:
            f.write(f"{self.rank} {line}\n")

    def npu_ipc_pid(self):
        import os
        return os.getpid()

    def npu_ipc_export(self, device, ptr, nbytes, importers):
        import os
        if self.fail == "export":
            raise RuntimeError("aclrtIpcMemGetExportKey failed with ACL error 107000")
        self.exports.append((device, ptr, nbytes, sorted(importers)))
        return f"key-{self.rank}-{os.getpid()}"

    def npu_ipc_import(self, device, key):
        if self.fail == "import":
            raise RuntimeError("aclrtIpcMemImportByKey failed with ACL error 107000")
        return 0x1000 + int(key.split("-")[1])

    def npu_ipc_close(self, key):
        self._log(f"close {key}")


def npu_ipc_protocol(rank, world, group, log_path, fail_rank=-1, fail=None):
    """One rank of mega._share_npu_buffers / _close_npu_buffers over FakeIpc on a 64-byte host tensor
    (device index 3): its addresses, keys and exports, or the error it raised."""
    import os

    from ..mega import _close_npu_buffers, _share_npu_buffers
    ipc = FakeIpc(rank, log_path, fail if rank == fail_rank else None)
    buf = torch.zeros(64, dtype=torch.int8)
    try:
        ptrs, keys = _share_npu_buffers(group, rank, world, buf, 3, ipc)
    except RuntimeError as e:
        return {"error": str(e), "pid": os.getpid()}
    _close_npu_buffers(group, rank, keys, [r for r in range(world) if r != rank], ipc)
    return {"ptrs": ptrs, "keys": keys, "own": buf.data_ptr(), "exports": ipc.exports, "pid": os.getpid()}
