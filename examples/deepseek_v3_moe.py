"""One DeepSeek-V3-shaped MoE layer and one V3.2 lightning-indexer step through deepgemm_ascend,
checked against a plain torch implementation, with the time of both.

MoE: router (sigmoid scores, top-8 of 256 experts, normalised weights), FP8 (1, 128, 128) tokens and
expert weights, M-grouped contiguous GEMMs for gate/up and down, SwiGLU, weighted combine; the hidden
size is reduced so that the layer runs on a CPU in seconds. Indexer: FP8 MQA logits of 64 heads over
causal KV ranges, then the top-k KV positions per query.

    python examples/deepseek_v3_moe.py [--tokens 256] [--hidden 1024] [--inter 256]
"""
import argparse
import time

import torch

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff


def timed(fn, repeats=3):
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def fp8_per_block(w):
    """Per-expert (128 x 128)-block FP8 weights and their float32 scales."""
    qs, sfs = zip(*(dg.per_block_cast_to_fp8(w[e], use_ue8m0=False) for e in range(w.size(0))))
    return torch.stack(qs), torch.stack(sfs)


def dequant_block(q, sf):
    return q.float() * sf.repeat_interleave(128, -2).repeat_interleave(128, -1)[..., :q.size(-2), :q.size(-1)]


def dequant_token(q, sf):
    return q.float() * sf.repeat_interleave(128, -1)[:, :q.size(-1)]


class MoE:
    def __init__(self, hidden, inter, experts=256, topk=8, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.topk, self.experts, self.inter = topk, experts, inter
        self.router = torch.randn(experts, hidden, generator=g) / hidden ** 0.5
        self.w13 = fp8_per_block(torch.randn(experts, 2 * inter, hidden, generator=g) / hidden ** 0.5)
        self.w2 = fp8_per_block(torch.randn(experts, hidden, inter, generator=g) / inter ** 0.5)
        # The torch path gets its weights dequantised once, outside the timed forward.
        self.w13_f32, self.w2_f32 = dequant_block(*self.w13), dequant_block(*self.w2)

    def route(self, x):
        scores = torch.sigmoid(x.float() @ self.router.T)
        weights, idx = scores.topk(self.topk, dim=-1)
        return idx, weights / weights.sum(-1, keepdim=True)

    def forward_library(self, x):
        idx, weights = self.route(x)
        t, h = x.shape
        align = dg.get_mk_alignment_for_contiguous_layout()
        flat = idx.flatten()
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=self.experts)
        starts = torch.zeros(self.experts, dtype=torch.long)
        padded = (counts + align - 1) // align * align
        starts[1:] = torch.cumsum(padded, 0)[:-1]
        rank_in_expert = torch.arange(flat.numel()) - torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
        rows = torch.empty_like(flat)
        rows[order] = starts[flat[order]] + rank_in_expert
        m = int(padded.sum())
        layout = torch.full((m,), -1, dtype=torch.int32)
        layout[rows] = flat.int()
        a = torch.zeros(m, h, dtype=torch.bfloat16)
        a[rows] = x[torch.arange(t).repeat_interleave(self.topk)]
        aq, sfa = dg.per_token_cast_to_fp8(a, use_ue8m0=False)
        gate_up = torch.empty(m, 2 * self.inter, dtype=torch.bfloat16)
        dg.m_grouped_fp8_gemm_nt_contiguous((aq, sfa), self.w13, gate_up, layout)
        gate, up = gate_up.float().chunk(2, dim=-1)
        act = (torch.nn.functional.silu(gate) * up).bfloat16()
        act[layout < 0] = 0
        actq, sfact = dg.per_token_cast_to_fp8(act, use_ue8m0=False)
        down = torch.empty(m, h, dtype=torch.bfloat16)
        dg.m_grouped_fp8_gemm_nt_contiguous((actq, sfact), self.w2, down, layout)
        out = (down[rows].float().view(t, self.topk, h) * weights.unsqueeze(-1)).sum(1)
        return out.bfloat16()

    def forward_torch(self, x):
        """Plain torch on the same FP8 weights (dequantised), one expert at a time, float32."""
        idx, weights = self.route(x)
        w13, w2 = self.w13_f32, self.w2_f32
        xq = dequant_token(*dg.per_token_cast_to_fp8(x, use_ue8m0=False))
        out = torch.zeros(x.shape, dtype=torch.float32)
        for e in torch.unique(idx).tolist():
            tok, slot = (idx == e).nonzero(as_tuple=True)
            gate, up = (xq[tok] @ w13[e].T).chunk(2, dim=-1)
            y = (torch.nn.functional.silu(gate) * up) @ w2[e].T
            out.index_add_(0, tok, y * weights[tok, slot].unsqueeze(-1))
        return out.bfloat16()


def indexer(seq=512, heads=64, dim=128, topk=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(seq, heads, dim, generator=g).to(torch.float8_e4m3fn)
    kv, sf = dg.per_custom_dims_cast_to_fp8(torch.randn(seq, dim, generator=g), (0,), False)
    weights = torch.randn(seq, heads, generator=g)
    ks = torch.zeros(seq, dtype=torch.int32)
    ke = torch.arange(1, seq + 1, dtype=torch.int32)  # causal: query i sees KV 0..i

    def library():
        logits = dg.fp8_mqa_logits(q, (kv, sf), weights, ks, ke)
        return logits, logits.topk(min(topk, seq), dim=-1).indices

    def reference():
        s = torch.einsum("shd,kd->shk", q.float(), kv.float() * sf[:, None])
        logits = (s.relu() * weights[..., None]).sum(1)
        mask = torch.arange(seq)[None, :] >= ke[:, None]
        logits = logits.masked_fill(mask, float("-inf"))
        return logits, logits.topk(min(topk, seq), dim=-1).indices

    return library, reference, ke


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--inter", type=int, default=256)
    args = p.parse_args(argv)
    torch.manual_seed(0)
    moe = MoE(args.hidden, args.inter)
    x = torch.randn(args.tokens, args.hidden).bfloat16()
    old = dg.get_mk_alignment_for_contiguous_layout()
    dg.set_mk_alignment_for_contiguous_layout(16)  # 256 experts x ~8 rows: keep the padding small
    try:
        ours, t_ours = timed(lambda: moe.forward_library(x))
    finally:
        dg.set_mk_alignment_for_contiguous_layout(old)
    ref, t_ref = timed(lambda: moe.forward_torch(x))
    moe_diff = calc_diff(ours, ref)
    print(f"MoE layer  T={args.tokens} H={args.hidden} I={args.inter} 256 experts top-8: "
          f"deepgemm_ascend {t_ours * 1e3:.1f} ms, torch {t_ref * 1e3:.1f} ms, calc_diff {moe_diff:.2e}")

    library, reference, ke = indexer()
    (logits, top), t_ours = timed(library)
    (ref_logits, ref_top), t_ref = timed(reference)
    valid = torch.arange(logits.size(1))[None, :] < ke[:, None]
    idx_diff = calc_diff(logits[valid], ref_logits[valid])
    overlap = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(top, ref_top)) / ref_top.numel()
    print(f"Indexer    S=SKV=512 H=64 D=128 top-64: deepgemm_ascend {t_ours * 1e3:.1f} ms, torch {t_ref * 1e3:.1f} "
          f"ms, calc_diff {idx_diff:.2e}, top-k overlap {overlap:.3f}")
    ok = moe_diff < 2e-3 and idx_diff < 1e-5 and overlap > 0.99
    print("deepseek_v3_moe: OK" if ok else "deepseek_v3_moe: MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
