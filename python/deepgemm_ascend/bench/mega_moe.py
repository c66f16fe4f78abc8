"""Benchmark entry of Mega MoE: the fused kernel against the unfused pipeline built from the library's
own kernels (all_to_all dispatch over gloo, M-grouped FP8 x FP4 GEMMs, the SwiGLU stage, all_to_all
back, combine), both on `--ranks` local ranks in the same run.

`--shapes "T,H,I"` = tokens per rank, hidden, intermediate. Experts: 4 per rank, top-6 routing of
randn scores, activation clamp 10 (upstream's CLI defaults, scaled down for the host). Each timed
call is entered by all ranks together (a gloo barrier first); a call's time is the slowest rank's,
and the median over calls is reported. Accuracy: fused and unfused must agree bitwise on every rank.
Ranks share the machine's cores (cores // ranks AI cores and torch threads each, at least 1).
"""
import statistics
import time
from typing import Callable, List

import torch

from ..testing import mega_moe as tm
from ..testing.distributed import run_ranks
from .base import BenchOptions, KernelBench, perf_fields

EXPERTS_PER_RANK, TOPK, CLAMP = 4, 6, 10.0
BENCH_SHAPES = [(128, 2048, 1024), (256, 2048, 1024)]
QUICK_SHAPES = [(32, 1024, 512)]
BASELINE = "all_to_all (gloo) + m_grouped_fp8_fp4_gemm_nt_contiguous x2 + SwiGLU stage + combine"

COLUMNS = [
    ("kernel", "kernel", "{}"), ("ranks", "ranks", "{}"), ("T/rank", "tokens", "{}"), ("H", "hidden", "{}"),
    ("I", "inter", "{}"), ("recv pairs", "received", "{}"), ("fused ms", "ours_ms", "{:.2f}"),
    ("fused TFLOPS", "ours_tflops", "{:.3f}"), ("unfused ms", "torch_ms", "{:.2f}"), ("ratio", "ratio", "{:.3f}"),
    ("bitwise", "bitwise", "{}"), ("status", "status", "{}"),
]


def cases(options: BenchOptions) -> List[dict]:
    shapes = options.shapes if options.shapes is not None else (QUICK_SHAPES if options.quick else BENCH_SHAPES)
    for t, h, i in shapes:
        if h % 128 or i % 128 or h == 0 or i == 0:
            raise ValueError(f"mega_moe: hidden and intermediate must be positive multiples of 128, got {h}, {i}")
    return [{"label": f"mega_moe ranks={options.ranks} T={t} H={h} I={i}", "tokens": t, "hidden": h, "inter": i}
            for (t, h, i) in shapes]


def bench_rank(rank, world, group, tokens, hidden, inter, repeat, warmup, seed):
    """Times fused and unfused calls, interleaved; returns this rank's samples and the bitwise check."""
    import torch.distributed as dist

    from ..mega import fp8_fp4_mega_moe, get_symm_buffer_for_mega_moe

    num_experts = EXPERTS_PER_RANK * world
    buf = get_symm_buffer_for_mega_moe(group, num_experts, tokens, TOPK, hidden, inter)
    weights = tm.make_weights(num_experts, hidden, inter, rank, world, seed=seed)
    inp = tm.make_rank_inputs(tokens, hidden, num_experts, TOPK, rank, world=world, seed=seed)
    y = torch.empty(tokens, hidden, dtype=torch.bfloat16)

    def fused():
        tm.fill_buffer(buf, inp)
        fp8_fp4_mega_moe(y, weights.l1, weights.l2, buf, activation_clamp=CLAMP)

    def unfused():
        return tm.unfused_mega_moe(inp, weights, num_experts, group, CLAMP)

    fused_s, unfused_s = [], []
    for i in range(warmup + repeat):
        for fn, out in ((fused, fused_s), (unfused, unfused_s)):
            dist.barrier(group=group)
            start = time.perf_counter()
            fn()
            if i >= warmup:
                out.append(time.perf_counter() - start)
    y_ref, counts = unfused()
    fused()
    buf.destroy()
    return {"fused": fused_s, "unfused": unfused_s, "bitwise": torch.equal(y, y_ref), "received": int(counts.sum())}


def run(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    t, h, i = case["tokens"], case["hidden"], case["inter"]
    status(f"running {options.ranks} ranks")
    res = run_ranks(options.ranks, bench_rank, t, h, i, options.repeat, options.warmup, options.seed, timeout=3600)
    # A call takes as long as its slowest rank.
    fused_s = [max(r["fused"][j] for r in res) for j in range(options.repeat)]
    unfused_s = [max(r["unfused"][j] for r in res) for j in range(options.repeat)]
    received = sum(r["received"] for r in res)
    flops = 2.0 * received * h * i * 3
    nbytes = received * (h + 2 * i + 2 * h)
    row = {"kernel": "mega_moe", "label": case["label"], "ranks": options.ranks, "tokens": t, "hidden": h,
           "inter": i, "received": received, "flops": flops, "bytes": nbytes}
    row.update(perf_fields("ours", fused_s, flops, nbytes))
    row.update(perf_fields("torch", unfused_s, flops, nbytes))
    row["ratio"] = statistics.median(unfused_s) / statistics.median(fused_s)
    bitwise = all(r["bitwise"] for r in res)
    row.update(bitwise="yes" if bitwise else "NO", status="ok" if bitwise else "FAIL", torch_op=BASELINE)
    return row


BENCH = KernelBench(name="mega_moe", description="Mega MoE fused vs the unfused pipeline on N ranks",
                    cases=cases, run=run, columns=COLUMNS, ratio_desc="unfused time / fused time")
