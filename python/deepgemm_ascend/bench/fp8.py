"""Benchmark entry of the FP8 / FP4 dense GEMMs fp8_fp4_gemm_{nt,nn,tn,tt} (alias fp8_gemm_*).

Each case times four callables round-robin in one process (median of the timed calls):

* ours: fp8_fp4_gemm_<layout> on the quantised operands and their scales;
* deq+mm: what a DeepGEMM user runs on the CPU with torch alone: dequantise both operands with
  their scales (``q.float() * expanded sf``, cast to bf16), then ``torch.matmul``; timed as one call,
  dequantisation included;
* torch bf16: ``torch.matmul`` on bf16 operands of the same shape that already exist (the
  weights-only comparison: same M, N, K, no quantisation);
* our bf16: our bf16_gemm_<layout> on the same bf16 operands.

"ratio" is deq+mm time / ours time; "ratio_torch_bf16" and "ratio_ours_bf16" divide the other two
baselines by ours (> 1: ours is faster). Accuracy: calc_diff of ours against a float64 product of
the dequantised operands; above 1e-3 the case is FAIL.
"""
from typing import Callable, List

import torch

from .. import fp8_gemm, gemm
from ..testing.bench import bench_interleaved_samples
from ..testing.numeric import calc_diff, poison_
from ..testing.shapes import BENCH_FP8_MNK, QUICK_FP8_MNK, make_operands
from ..utils.math import (FP4_VALUES, dequant_fp4, dequant_fp8, per_block_cast_to_fp8, per_token_cast_to_fp4,
                          per_token_cast_to_fp8, transpose_packed_fp4)
from .base import BenchOptions, KernelBench, accuracy_status, perf_fields
from .bf16 import OUT_DTYPES, _synced, check_dense_options, _torch_operands, problem_bytes as bf16_bytes, problem_flops

DIFF_THRESHOLD = 1e-3
FUNCS = {"nt": fp8_gemm.fp8_fp4_gemm_nt, "nn": fp8_gemm.fp8_fp4_gemm_nn, "tn": fp8_gemm.fp8_fp4_gemm_tn,
         "tt": fp8_gemm.fp8_fp4_gemm_tt}
BF16_FUNCS = {"nt": gemm.bf16_gemm_nt, "nn": gemm.bf16_gemm_nn, "tn": gemm.bf16_gemm_tn, "tt": gemm.bf16_gemm_tt}

# Recipe name -> ((A kind, gran_m, gran_k_a), (B kind, gran_n, gran_k_b), UE8M0 scales).
RECIPES = {
    "block": (("fp8", 1, 128), ("fp8", 128, 128), False),  # (1, 128, 128), fp32 scales (DeepSeek-V3)
    "mx": (("fp8", 1, 32), ("fp8", 1, 32), True),  # (1, 1, 32), UE8M0 scales (MXFP8)
    "fp8xfp4": (("fp8", 1, 128), ("fp4", 1, 32), True),  # FP8 A (1, 128) x FP4 B (1, 32), UE8M0
}
TORCH_OP = "dequantise (q.float() * expanded sf -> bf16) + torch.matmul(bf16, bf16, out=bf16)"
_FP4_LUT = torch.tensor(FP4_VALUES + tuple(-v for v in FP4_VALUES), dtype=torch.float32)

COLUMNS = [
    ("kernel", "kernel", "{}"), ("recipe", "recipe", "{}"), ("layout", "layout", "{}"),
    ("M", "m", "{}"), ("N", "n", "{}"), ("K", "k", "{}"), ("out", "out_dtype", "{}"),
    ("ours ms", "ours_ms", "{:.3f}"), ("ours TFLOPS", "ours_tflops", "{:.3f}"), ("of peak", "peak_frac", "{:.0%}"),
    ("deq+mm ms", "torch_ms", "{:.3f}"), ("vs deq+mm", "ratio", "{:.3f}"),
    ("torch bf16 ms", "torch_bf16_ms", "{:.3f}"), ("vs torch bf16", "ratio_torch_bf16", "{:.3f}"),
    ("our bf16 ms", "ours_bf16_ms", "{:.3f}"), ("vs our bf16", "ratio_ours_bf16", "{:.3f}"),
    ("diff", "diff", "{:.2e}"), ("status", "status", "{}"),
]


def cases(options: BenchOptions) -> List[dict]:
    """One case per (shape, recipe, layout): the given shapes, else QUICK_FP8_MNK or BENCH_FP8_MNK."""
    check_dense_options("fp8", options)
    bad = [r for r in options.recipes if r not in RECIPES]
    if bad or not options.recipes:
        raise ValueError(f"fp8: unknown recipe(s) {', '.join(bad) or '(none given)'}; choose from {', '.join(RECIPES)}")
    shapes = options.shapes if options.shapes is not None else (QUICK_FP8_MNK if options.quick else BENCH_FP8_MNK)
    return [
        {"label": f"{recipe} {layout} {m}x{n}x{k} {options.out_dtype}", "recipe": recipe, "layout": layout,
         "m": m, "n": n, "k": k, "out_dtype": options.out_dtype}
        for (m, n, k) in shapes
        for recipe in options.recipes
        for layout in options.layouts
    ]


class Operand:
    """One logical operand [rows, K] quantised by a recipe side (kind, gran_mn, gran_k) and stored for a layout."""

    def __init__(self, x: torch.Tensor, side: tuple, ue8m0: bool, mn_major: bool, device: str):
        self.kind, self.gran_mn, self.gran_k = side
        if self.kind == "fp4":
            self.q, self.sf = per_token_cast_to_fp4(x, ue8m0, gran_k=self.gran_k)
        elif self.gran_mn == 1:
            self.q, self.sf = per_token_cast_to_fp8(x, ue8m0, gran_k=self.gran_k)
        else:  # square blocks
            self.q, self.sf = per_block_cast_to_fp8(x, ue8m0, gran_k=self.gran_k)
        self.mn_major = mn_major
        if mn_major:  # upstream convention: MN-major operands carry transposed values and scales
            q = transpose_packed_fp4(self.q) if self.kind == "fp4" else self.q.T.contiguous()
            self.stored = (q.to(device), self.sf.T.to(device))
        else:
            self.stored = (self.q.to(device), self.sf.to(device))

    def reference(self) -> torch.Tensor:
        """float64 [rows, K] dequantised values (the library's tested helpers)."""
        deq = dequant_fp4 if self.kind == "fp4" else dequant_fp8
        return deq(self.q, self.sf, self.gran_mn, self.gran_k).double()

    def torch_dequant(self) -> torch.Tensor:
        """bf16 dequantised operand in its stored orientation, with plain torch ops (the timed baseline)."""
        q, sf = self.stored
        if self.kind == "fp4":  # two E2M1 codes per byte, low nibble first
            u, lut = q.view(torch.uint8), _FP4_LUT.to(q.device)
            v = torch.stack((lut[(u & 0xF).long()], lut[(u >> 4).long()]), dim=-1).flatten(-2)
        else:
            v = q.float()
        gr, gc = (self.gran_k, self.gran_mn) if self.mn_major else (self.gran_mn, self.gran_k)
        rows, cols = v.shape
        if rows % gr == 0 and cols % gc == 0:  # broadcast the scales over their blocks, no expanded copy
            v = v.view(rows // gr, gr, cols // gc, gc) * sf[:, None, :, None]
        else:
            v = v * sf.repeat_interleave(gr, 0)[:rows].repeat_interleave(gc, 1)[:, :cols]
        return v.view(rows, cols).to(torch.bfloat16)

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.stored)


def run(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    """Checks one case against a float64 reference, then times ours and the three baselines round-robin."""
    recipe, layout, m, n, k = case["recipe"], case["layout"], case["m"], case["n"], case["k"]
    out_dtype = OUT_DTYPES[case["out_dtype"]]
    side_a, side_b, ue8m0 = RECIPES[recipe]
    dev = options.device

    status("quantising operands")
    gen = torch.Generator().manual_seed(options.seed)
    a_logical = torch.randn(m, k, generator=gen)
    b_logical = torch.randn(n, k, generator=gen)
    qa = Operand(a_logical, side_a, ue8m0, layout[0] == "t", dev)
    qb = Operand(b_logical, side_b, ue8m0, layout[1] == "n", dev)
    a16, b16 = (t.to(dev) for t in make_operands(layout, a_logical.to(torch.bfloat16), b_logical.to(torch.bfloat16)))
    ta16, tb16 = _torch_operands(layout, a16, b16)
    del a_logical, b_logical
    kwargs = {"recipe_a": side_a[1:], "recipe_b": side_b[1:]}
    d = poison_(torch.empty(m, n, dtype=out_dtype, device=dev))
    d_torch = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
    d_bf16 = torch.empty(m, n, dtype=out_dtype, device=dev)
    fn, bf16_fn = FUNCS[layout], BF16_FUNCS[layout]

    def ours():
        fn(qa.stored, qb.stored, d, **kwargs)

    def dequant_matmul():
        ta, tb = _torch_operands(layout, qa.torch_dequant(), qb.torch_dequant())
        torch.matmul(ta, tb, out=d_torch)

    status("checking accuracy")
    ours()
    dequant_matmul()
    ref = qa.reference() @ qb.reference().T  # float64, from the dequantised operands
    diff = calc_diff(d.cpu(), ref)
    torch_diff = calc_diff(d_torch.cpu(), ref)
    del ref

    status("timing")
    ours_s, torch_s, torch_bf16_s, ours_bf16_s = bench_interleaved_samples(
        [_synced(f, dev) for f in (ours, dequant_matmul, lambda: torch.matmul(ta16, tb16, out=d_torch),
                                   lambda: bf16_fn(a16, b16, d_bf16))],
        repeats=options.repeat, warmups=options.warmup, min_seconds=options.min_time)

    flops = problem_flops(m, n, k)
    nbytes = qa.nbytes() + qb.nbytes() + d.element_size() * m * n  # operands, scales and D
    row = {"kernel": "fp8", "label": case["label"], "recipe": recipe, "layout": layout, "m": m, "n": n, "k": k,
           "out_dtype": case["out_dtype"], "device": dev, "recipe_a": list(side_a[1:]),
           "recipe_b": list(side_b[1:]), "b_dtype": side_b[0], "ue8m0": ue8m0, "flops": flops, "bytes": nbytes}
    row.update(perf_fields("ours", ours_s, flops, nbytes))
    row.update(perf_fields("torch", torch_s, flops, nbytes))
    row.update(perf_fields("torch_bf16", torch_bf16_s, flops, bf16_bytes(m, n, k, "bf16")))
    row.update(perf_fields("ours_bf16", ours_bf16_s, flops, bf16_bytes(m, n, k, case["out_dtype"])))
    for key, base in (("ratio", "torch"), ("ratio_torch_bf16", "torch_bf16"), ("ratio_ours_bf16", "ours_bf16")):
        row[key] = row[f"{base}_ms"] / row["ours_ms"] if row["ours_ms"] > 0 else None
    row.update(diff=diff, torch_diff=torch_diff, status=accuracy_status(diff, DIFF_THRESHOLD), torch_op=TORCH_OP,
               torch_bf16_op="torch.matmul(bf16, bf16, out=bf16)", ours_bf16_op=f"bf16_gemm_{layout}")
    return row


BENCH = KernelBench(name="fp8", description="FP8 / FP4 dense GEMMs fp8_fp4_gemm_{nt,nn,tn,tt} vs torch dequantise + "
                                            "matmul, torch bf16 matmul and our bf16 GEMM",
                    cases=cases, run=run, columns=COLUMNS, ratio_desc="deq+mm time / ours time")
