"""Benchmark entry of the lightning-indexer MQA logits (fp8_fp4_mqa_logits, FP8 mode).

Each case builds causal ranges (query i sees KV rows [0, i + SKV - S)) and times, round-robin in one
process, ours against the torch reference a user would write: dequantise KV with its scales, einsum of
the FP8 queries (as float) with KV, ReLU, weights, head sum, and -inf outside the ranges. Accuracy:
calc_diff of ours against that torch result over the valid entries (the -inf pattern must match too).
`--shapes "S,SKV,H"` (head_dim 128).
"""
from typing import Callable, List

import torch

from ..mqa_logits import fp8_fp4_mqa_logits
from ..testing.bench import bench_interleaved_samples
from ..testing.numeric import calc_diff
from ..utils.math import per_custom_dims_cast_to_fp8
from .base import BenchOptions, KernelBench, accuracy_status, ours_vs_torch

HEAD_DIM = 128
DIFF_THRESHOLD = 1e-5
BENCH_SHAPES = [(4096, 4096, 64), (2048, 8192, 32), (1024, 16384, 64)]
QUICK_SHAPES = [(512, 2048, 64)]
TORCH_OP = "kv.float() * sf, einsum('shd,td->sht'), relu, * weights, sum over heads, -inf mask (fp32)"

COLUMNS = [
    ("kernel", "kernel", "{}"), ("S", "m", "{}"), ("SKV", "n", "{}"), ("H", "k", "{}"),
    ("ours ms", "ours_ms", "{:.3f}"), ("ours TFLOPS", "ours_tflops", "{:.3f}"), ("ours GB/s", "ours_gbps", "{:.2f}"),
    ("torch ms", "torch_ms", "{:.3f}"), ("torch TFLOPS", "torch_tflops", "{:.3f}"), ("ratio", "ratio", "{:.3f}"),
    ("diff", "diff", "{:.2e}"), ("status", "status", "{}"),
]


def cases(options: BenchOptions) -> List[dict]:
    shapes = options.shapes if options.shapes is not None else (QUICK_SHAPES if options.quick else BENCH_SHAPES)
    return [{"label": f"mqa S={s} SKV={skv} H={h}", "m": s, "n": skv, "k": h} for (s, skv, h) in shapes]


def run(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    s, skv, h = case["m"], case["n"], case["k"]
    status("quantising operands")
    gen = torch.Generator().manual_seed(options.seed)
    q8 = torch.randn(s, h, HEAD_DIM, generator=gen).to(torch.float8_e4m3fn)
    kv8, sf = per_custom_dims_cast_to_fp8(torch.randn(skv, HEAD_DIM, generator=gen), (0,), False)
    w = torch.randn(s, h, generator=gen)
    ks = torch.zeros(s, dtype=torch.int32)
    ke = (torch.arange(s, dtype=torch.int32) + max(skv - s, 0) + 1).clamp(max=skv).to(torch.int32)
    cols = torch.arange(skv)
    valid = (cols[None, :] >= ks[:, None].long()) & (cols[None, :] < ke[:, None].long())

    def ours():
        return fp8_fp4_mqa_logits((q8, None), (kv8, sf), w, ks, ke)

    def reference():
        scores = torch.einsum("shd,td->sht", q8.float(), kv8.float() * sf[:, None]).clamp_(min=0)
        return (scores * w[:, :, None]).sum(1).masked_fill_(~valid, float("-inf"))

    status("checking accuracy")
    out, ref = ours(), reference()
    diff = calc_diff(out[valid], ref[valid]) if bool(torch.equal(torch.isinf(out), ~valid)) else float("nan")
    del ref

    status("timing")
    ours_s, torch_s = bench_interleaved_samples([ours, reference], repeats=options.repeat, warmups=options.warmup,
                                                min_seconds=options.min_time)
    cost = int((ke - ks).sum())
    flops = 2.0 * cost * h * HEAD_DIM
    nbytes = q8.numel() + kv8.numel() + 4 * (sf.numel() + w.numel() + 2 * s) + 4 * cost
    row = {"kernel": "mqa", "label": case["label"], "m": s, "n": skv, "k": h, "head_dim": HEAD_DIM,
           "flops": flops, "bytes": nbytes}
    row.update(ours_vs_torch(ours_s, torch_s, flops, nbytes))
    row.update(diff=diff, status=accuracy_status(diff, DIFF_THRESHOLD), torch_op=TORCH_OP)
    return row


BENCH = KernelBench(name="mqa", description="lightning-indexer MQA logits (FP8, causal ranges) vs a torch reference",
                    cases=cases, run=run, columns=COLUMNS)
