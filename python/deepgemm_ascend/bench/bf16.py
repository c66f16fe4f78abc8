"""Benchmark entry of the BF16 dense GEMMs bf16_gemm_{nt,nn,tn,tt} against torch.matmul."""
import statistics
from typing import Callable, List

import torch

from .. import gemm
from ..testing.bench import bench_interleaved_samples
from ..testing.numeric import bf16_reference, calc_diff, poison_
from ..testing.shapes import BENCH_BF16_MNK, LAYOUTS, QUICK_BF16_MNK, make_operands
from .base import BenchOptions, KernelBench, accuracy_status, ours_vs_torch

FUNCS = {"nt": gemm.bf16_gemm_nt, "nn": gemm.bf16_gemm_nn, "tn": gemm.bf16_gemm_tn, "tt": gemm.bf16_gemm_tt}
OUT_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}

# torch has no bf16 x bf16 -> fp32 matmul on CPU, so the baseline is always torch's bf16-output matmul.
TORCH_OP = "torch.matmul(bf16, bf16, out=bf16)"


def problem_bytes(m: int, n: int, k: int, out_dtype: str, with_c: bool = False) -> int:
    """Bytes of A and B (bf16), D (and C) in the output dtype: the minimum traffic of one call."""
    out_size = 2 if out_dtype == "bf16" else 4
    return 2 * (m * k + n * k) + out_size * m * n * (2 if with_c else 1)


def problem_flops(m: int, n: int, k: int) -> int:
    return 2 * m * n * k


def check_dense_options(kernel: str, options: BenchOptions) -> None:
    """ValueError naming `kernel` for an output dtype or a layout the dense GEMM benchmarks do not know."""
    if options.out_dtype not in OUT_DTYPES:
        raise ValueError(f"{kernel}: unknown out dtype {options.out_dtype!r}; choose from {', '.join(OUT_DTYPES)}")
    bad = [layout for layout in options.layouts if layout not in LAYOUTS]
    if bad:
        raise ValueError(f"{kernel}: unknown layout(s) {', '.join(bad)}; choose from {', '.join(LAYOUTS)}")


def cases(options: BenchOptions) -> List[dict]:
    """One case per (shape, layout): the given shapes, else QUICK_BF16_MNK or BENCH_BF16_MNK."""
    check_dense_options("bf16", options)
    shapes = options.shapes if options.shapes is not None else (QUICK_BF16_MNK if options.quick else BENCH_BF16_MNK)
    return [
        {"label": f"{layout} {m}x{n}x{k} {options.out_dtype}", "layout": layout, "m": m, "n": n, "k": k,
         "out_dtype": options.out_dtype}
        for (m, n, k) in shapes
        for layout in options.layouts
    ]


def _torch_operands(layout: str, a: torch.Tensor, b: torch.Tensor):
    """Views of the stored operands as logical A [M, K] and B^T [K, N] for torch.matmul (no copies)."""
    return (a.T if layout[0] == "t" else a), (b if layout[1] == "n" else b.T)


def _synced(fn: Callable[[], object], device: str) -> Callable[[], None]:
    if device == "cpu":
        return fn
    sync = getattr(torch, device).synchronize

    def call():
        fn()
        sync()

    return call


def run(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    """Checks one case against a float64 reference, then times ours and torch interleaved."""
    layout, m, n, k = case["layout"], case["m"], case["n"], case["k"]
    out_dtype = OUT_DTYPES[case["out_dtype"]]
    dev = options.device

    status("preparing operands")
    gen = torch.Generator().manual_seed(options.seed)
    a_logical = torch.randn(m, k, generator=gen).to(torch.bfloat16)
    b_logical = torch.randn(n, k, generator=gen).to(torch.bfloat16)
    a, b = (t.to(dev) for t in make_operands(layout, a_logical, b_logical))
    d = poison_(torch.empty(m, n, dtype=out_dtype, device=dev))
    ta, tb = _torch_operands(layout, a, b)
    d_torch = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
    fn = FUNCS[layout]

    status("checking accuracy")
    fn(a, b, d)
    torch.matmul(ta, tb, out=d_torch)
    ref = bf16_reference(a_logical, b_logical)  # float64, from the same bf16 inputs
    diff = calc_diff(d.cpu(), ref)
    torch_diff = calc_diff(d_torch.cpu(), ref)
    del ref, a_logical, b_logical

    status("timing")
    # Rounds of (ours, torch, ours): the first call of a round follows the previous round's ours (ours
    # alone, back to back), the last one follows torch (interleaved; the time that counts). Both kinds
    # sit in the same rounds, so a machine whose speed drifts affects them alike.
    ours_call = _synced(lambda: fn(a, b, d), dev)
    alone_s, torch_s, ours_s = bench_interleaved_samples(
        [ours_call, _synced(lambda: torch.matmul(ta, tb, out=d_torch), dev), ours_call],
        repeats=options.repeat, warmups=options.warmup, min_seconds=options.min_time)

    flops = problem_flops(m, n, k)
    nbytes = problem_bytes(m, n, k, case["out_dtype"])
    row = {"kernel": "bf16", "label": case["label"], "layout": layout, "m": m, "n": n, "k": k,
           "out_dtype": case["out_dtype"], "device": dev, "flops": flops, "bytes": nbytes}
    row.update(ours_vs_torch(ours_s, torch_s, flops, nbytes, problem_bytes(m, n, k, "bf16")))
    row.update(diff=diff, torch_diff=torch_diff, status=accuracy_status(diff), torch_op=TORCH_OP)
    row["alone_ms"] = statistics.median(alone_s) * 1e3
    row["vs_alone"] = row["ours_ms"] / row["alone_ms"] if row["alone_ms"] > 0 else None
    return row


BENCH = KernelBench(name="bf16", description="BF16 dense GEMMs bf16_gemm_{nt,nn,tn,tt} vs torch.matmul",
                    cases=cases, run=run)
