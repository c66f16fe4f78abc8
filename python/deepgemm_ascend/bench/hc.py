"""Benchmark entry of the HyperConnection pre-norm GEMM (tf32_hc_prenorm_gemm).

Times ours against the torch reference (float32 matmul of a with b, and the row sums of squares; ours
multiplies b as two bf16 terms, 16 significant bits) round-robin in one process. Accuracy: calc_diff of
d (summed over splits) against that reference. `--shapes "M,N,K"`; the default set runs both unsplit and
16 splits.
"""
from typing import Callable, List

import torch

from ..hc_prenorm import tf32_hc_prenorm_gemm
from ..testing.bench import bench_interleaved_samples
from ..testing.numeric import calc_diff
from .base import BenchOptions, KernelBench, accuracy_status, ours_vs_torch

DIFF_THRESHOLD = 1e-8
BENCH_SHAPES = [(4096, 24, 28672), (8192, 24, 7680), (4096, 24, 7168)]
QUICK_SHAPES = [(512, 24, 7168)]
SPLITS = (None, 16)
TORCH_OP = "a.float() @ b.T and (a.float() ** 2).sum(-1), float32"

COLUMNS = [
    ("kernel", "kernel", "{}"), ("M", "m", "{}"), ("N", "n", "{}"), ("K", "k", "{}"), ("splits", "splits", "{}"),
    ("ours ms", "ours_ms", "{:.3f}"), ("ours TFLOPS", "ours_tflops", "{:.3f}"), ("ours GB/s", "ours_gbps", "{:.2f}"),
    ("torch ms", "torch_ms", "{:.3f}"), ("ratio", "ratio", "{:.3f}"), ("diff", "diff", "{:.2e}"),
    ("status", "status", "{}"),
]


def cases(options: BenchOptions) -> List[dict]:
    shapes = options.shapes if options.shapes is not None else (QUICK_SHAPES if options.quick else BENCH_SHAPES)
    return [{"label": f"hc {m}x{n}x{k} splits={sp}", "m": m, "n": n, "k": k, "splits": sp}
            for (m, n, k) in shapes for sp in SPLITS]


def run(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    m, n, k, splits = case["m"], case["n"], case["k"], case["splits"]
    status("building operands")
    gen = torch.Generator().manual_seed(options.seed)
    a = torch.randn(m, k, generator=gen).bfloat16()
    b = torch.randn(n, k, generator=gen)
    s = splits or 1
    d = torch.empty((s, m, n) if splits else (m, n))
    sq = torch.empty((s, m) if splits else (m,))
    d_ref, sq_ref = torch.empty(m, n), torch.empty(m)

    def ours():
        tf32_hc_prenorm_gemm(a, b, d, sq, splits)

    def reference():
        af = a.float()
        torch.matmul(af, b.T, out=d_ref)
        torch.sum(af * af, -1, out=sq_ref)

    status("checking accuracy")
    ours()
    reference()
    diff = max(calc_diff(d.view(s, m, n).sum(0), d_ref), calc_diff(sq.view(s, m).sum(0), sq_ref))

    status("timing")
    ours_s, torch_s = bench_interleaved_samples([ours, reference], repeats=options.repeat, warmups=options.warmup,
                                                min_seconds=options.min_time)
    flops = 2.0 * m * n * k
    nbytes = a.numel() * 2 + b.numel() * 4 + d.numel() * 4 + sq.numel() * 4
    row = {"kernel": "hc", "label": case["label"], "m": m, "n": n, "k": k, "splits": splits or "-",
           "flops": flops, "bytes": nbytes}
    row.update(ours_vs_torch(ours_s, torch_s, flops, nbytes))
    row.update(diff=diff, status=accuracy_status(diff, DIFF_THRESHOLD), torch_op=TORCH_OP)
    return row


BENCH = KernelBench(name="hc", description="HyperConnection pre-norm GEMM (B as two bf16 terms) vs torch float32",
                    cases=cases, run=run, columns=COLUMNS)
