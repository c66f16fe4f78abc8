"""Benchmark entry of the MoE grouped GEMMs: M-grouped contiguous, M-grouped masked, K-grouped.

The default set is one rank of a DeepSeek-V3 MoE layer with expert parallelism over 8 ranks:
256 experts, top-8, hidden 7168, intermediate 2048, so each rank holds 32 local experts and the
linear-1 (gate + up) weights of one rank are [32, 2 * 2048, 7168].

* contiguous (prefill): 4096 tokens x top-8 over 256 experts gives one rank about 4096 routed rows.
  Expert loads are drawn with a fixed seed: popularity p_g ~ exp(N(0, 0.5^2)), then 4096 draws
  from multinomial(p) (uneven, never exactly balanced). Every group starts at a multiple of
  get_mk_alignment_for_contiguous_layout(); padding rows of A are zero and are not counted.
* masked (decode): 32 groups, A [32, Mmax = 128, 7168]; masked_m[g] drawn uniformly in
  [ceil(expected_m / 2), expected_m + expected_m // 2] for expected_m in 8, 32, 64.
* k-grouped (weight gradient, small): dW[g] = C[g] + dY_g.T @ X_g over 8 experts, 2048 routed
  rows (each group padded to the alignment with zero rows), dW [8, 7168, 2048] in fp32.

The FP8 cases use recipe (1, 128, 128) with fp32 scales: A per_token_cast_to_fp8, every expert's
weights per_block_cast_to_fp8 of torch.randn. The BF16 cases use the same weights dequantised to
bf16. Each case is timed round-robin in one process (ours and its baselines, median of the timed
calls) and then the D of the last call is checked against a float64 reference built per group
(FP8: from the exactly dequantised operands, FAIL above 1e-3; BF16: from the bf16 operands, FAIL
above 1e-5; `diff` is the worst group; masked rows at or beyond masked_m must stay untouched).
The baselines:

* loop: what a torch user writes, a Python loop over the experts that have rows. FP8: per expert,
  dequantise that expert's rows and weights with their scales (q.float(), scaled in place, -> bf16)
  and torch.matmul; BF16: torch.matmul of the valid rows; k-grouped: torch.matmul(dY_g.T, X_g) in
  bf16 added to C[g] in fp32. "ratio" = loop time / ours time (the issue target for masked: >= 3).
* bf16 loop (FP8 cases): the same loop on weights and rows that were dequantised to bf16
  beforehand (the weights-only comparison, nothing is dequantised per call).
* dense (contiguous cases): our dense GEMM (fp8_gemm_nt / bf16_gemm_nt) of the same total M (the
  valid rows) against one expert's weights; same FLOPs, so "vs dense" = dense time / grouped time
  is grouped throughput / dense throughput (the issue target for contiguous FP8: >= 0.9).

Columns: rows = valid (routed) rows, the only ones counted; M = stored rows of A (contiguous:
with the alignment padding; masked: G x Mmax); for k-grouped, M x N is the shape of each dW[g] and
K the padded sum of the rows. TFLOPS count only valid rows: 2 * sum(rows) * N * K (k-grouped:
2 * sum(rows) * M * N). --quick is a small version with 8 experts. --shapes "M,N,K" gives, per
shape, the five case kinds with M routed rows over 32 experts (masked: expected_m = ceil(M / 32);
k-grouped: M rows over 8 experts, dW [8, N, K]). --layouts, --recipes and --out-dtype do not apply
(nt layout, recipe (1, 128, 128) with fp32 scales, bf16 D; k-grouped D is fp32).

The expert weights of one (groups, N, K) are generated once and shared by the cases that use them
(contiguous and masked, FP8 and BF16); they are released after the last such case.
"""
import math
from typing import Callable, Dict, List

import torch

from .. import fp8_gemm, gemm, grouped_gemm
from ..testing.bench import bench_interleaved_samples
from ..testing.numeric import calc_diff, poison_
from ..utils.math import per_block_cast_to_fp8, per_token_cast_to_fp8
from .base import BenchOptions, KernelBench, accuracy_status, perf_fields
from .bf16 import _synced

FP8_THRESHOLD, BF16_THRESHOLD = 1e-3, 1e-5
GRAN = 128  # recipe (1, 128, 128): A per (row, 128 columns), B per 128 x 128 block
LOCAL_EXPERTS = 32  # 256 experts over 8 ranks
DEFAULT = {"groups": LOCAL_EXPERTS, "rows": 4096, "n": 2 * 2048, "k": 7168, "expected_m": (8, 32, 64), "m_max": 128,
           "kg": {"groups": 8, "rows": 2048, "m": 7168, "n": 2048}}
QUICK = {"groups": 8, "rows": 512, "n": 1024, "k": 2048, "expected_m": (8, 32), "m_max": 128,
         "kg": {"groups": 4, "rows": 512, "m": 1024, "n": 512}}
KG_GROUPS = 8  # k-grouped groups of --shapes

COLUMNS = [
    ("kernel", "kernel", "{}"), ("case", "variant", "{}"), ("dtype", "dtype", "{}"), ("G", "groups", "{}"),
    ("exp m", "expected_m", "{}"), ("rows", "rows", "{}"), ("M", "m", "{}"), ("N", "n", "{}"), ("K", "k", "{}"),
    ("ours ms", "ours_ms", "{:.3f}"), ("ours TFLOPS", "ours_tflops", "{:.3f}"),
    ("loop ms", "torch_ms", "{:.3f}"), ("vs loop", "ratio", "{:.3f}"),
    ("bf16 loop ms", "torch_bf16_ms", "{:.3f}"), ("vs bf16 loop", "ratio_torch_bf16", "{:.3f}"),
    ("dense ms", "dense_ms", "{:.3f}"), ("vs dense", "ratio_dense", "{:.3f}"),
    ("diff", "diff", "{:.2e}"), ("status", "status", "{}"),
]

# Expert weights shared by the cases of one (groups, n, k, seed); see _weights / _release.
_CACHE: Dict[tuple, dict] = {}


def _scenarios(options: BenchOptions) -> List[dict]:
    if options.shapes is None:
        return [QUICK if options.quick else DEFAULT]
    out = []
    for m, n, k in options.shapes:
        em = max(1, math.ceil(m / LOCAL_EXPERTS))
        out.append({"groups": LOCAL_EXPERTS, "rows": m, "n": n, "k": k, "expected_m": (em,),
                    "m_max": max(128, _align(em + em // 2, 16)),
                    "kg": {"groups": KG_GROUPS, "rows": m, "m": n, "n": k}})
    return out


def cases(options: BenchOptions) -> List[dict]:
    """Per scenario: contiguous FP8 and BF16, masked BF16 and FP8 per expected_m, k-grouped BF16."""
    out = []
    for sc in _scenarios(options):
        g, n, k = sc["groups"], sc["n"], sc["k"]
        key = (g, n, k, options.seed)
        common = {"groups": g, "n": n, "k": k, "weights": key}
        for dtype in ("fp8", "bf16"):
            out.append(dict(common, label=f"contiguous {dtype} G{g} {sc['rows']} rows {n}x{k}", variant="contiguous",
                            dtype=dtype, rows=sc["rows"]))
        for dtype in ("bf16", "fp8"):
            for em in sc["expected_m"]:
                out.append(dict(common, label=f"masked {dtype} G{g} expected_m {em} {n}x{k}", variant="masked",
                                dtype=dtype, expected_m=em, m_max=sc["m_max"]))
        out[-1]["release"] = True  # the last case that uses these weights frees them
        kg = sc["kg"]
        out.append({"label": f"k-grouped bf16 G{kg['groups']} {kg['rows']} rows {kg['m']}x{kg['n']}",
                    "variant": "k-grouped", "dtype": "bf16", "groups": kg["groups"], "rows": kg["rows"],
                    "m": kg["m"], "n": kg["n"]})
    return out


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _dequant_bf16(q: torch.Tensor, sf: torch.Tensor, gr: int, gc: int) -> torch.Tensor:
    """Plain torch dequantisation (the timed loop): q.float(), scaled in place over gr x gc blocks, -> bf16."""
    rows, cols = q.shape
    v = q.float()
    if rows % gr == 0 and cols % gc == 0:
        v.view(rows // gr, gr, cols // gc, gc).mul_(sf[:, None, :, None])
    else:
        v.mul_(sf.repeat_interleave(gr, 0)[:rows].repeat_interleave(gc, 1)[:, :cols])
    return v.to(torch.bfloat16)


def _dequant_f64(q: torch.Tensor, sf: torch.Tensor, gr: int, gc: int) -> torch.Tensor:
    """Exact float64 dequantisation q * scales (the reference)."""
    rows, cols = q.shape
    v, sf = q.double(), sf.double()
    if rows % gr == 0 and cols % gc == 0:
        return (v.view(rows // gr, gr, cols // gc, gc) * sf[:, None, :, None]).view(rows, cols)
    return v * sf.repeat_interleave(gr, 0)[:rows].repeat_interleave(gc, 1)[:, :cols]


def _loads(total: int, groups: int, gen: torch.Generator) -> List[int]:
    """Rows per expert: `total` draws from a multinomial over skewed expert popularities."""
    if total == 0:
        return [0] * groups
    popularity = torch.exp(0.5 * torch.randn(groups, generator=gen, dtype=torch.float64))
    picks = torch.multinomial(popularity / popularity.sum(), total, replacement=True, generator=gen)
    return torch.bincount(picks, minlength=groups).tolist()


def _weights(key: tuple, status: Callable[[str], None]) -> dict:
    """{"q": fp8 [G, N, K], "sf": fp32 [G, N/128, K/128], "b16": the same weights dequantised to bf16} for `key`."""
    for other in [k for k in _CACHE if k != key]:  # one set at a time
        del _CACHE[other]
    entry = _CACHE.get(key)
    g, n, k, seed = key
    if entry is None:
        gen = torch.Generator().manual_seed(seed + 1)
        q = torch.empty(g, n, k, dtype=torch.float8_e4m3fn)
        sf = torch.empty(g, math.ceil(n / GRAN), math.ceil(k / GRAN))
        for e in range(g):
            status(f"quantising expert weights {e + 1}/{g}")
            q[e], sf[e] = per_block_cast_to_fp8(torch.randn(n, k, generator=gen), False)
        entry = _CACHE[key] = {"q": q, "sf": sf}
    if "b16" not in entry:
        status("dequantising expert weights to bf16")
        b16 = torch.empty(g, n, k, dtype=torch.bfloat16)
        for e in range(g):
            b16[e] = _dequant_bf16(entry["q"][e], entry["sf"][e], GRAN, GRAN)
        entry["b16"] = b16
    return entry


def _release(case: dict) -> None:
    if case.get("release"):
        _CACHE.pop(case["weights"], None)


def run(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    try:
        if case["variant"] == "contiguous":
            return _run_contiguous(case, options, status)
        if case["variant"] == "masked":
            return _run_masked(case, options, status)
        return _run_k_grouped(case, options, status)
    finally:
        _release(case)


def _row(case: dict, m: int, n: int, k: int, rows: int, flops: int, nbytes: int, samples: dict, diff: float,
         torch_diff: float, threshold: float, **extra) -> dict:
    row = {"kernel": "moe", "label": case["label"], "variant": case["variant"], "dtype": case["dtype"],
           "groups": case["groups"], "expected_m": case.get("expected_m"), "rows": rows, "m": m, "n": n,
           "k": k, "out_dtype": "fp32" if case["variant"] == "k-grouped" else "bf16", "flops": flops,
           "bytes": nbytes}
    for prefix, s in samples.items():
        row.update(perf_fields(prefix, s, flops, nbytes))
    for key, base in (("ratio", "torch"), ("ratio_torch_bf16", "torch_bf16"), ("ratio_dense", "dense")):
        if f"{base}_ms" in row:
            row[key] = row[f"{base}_ms"] / row["ours_ms"] if row["ours_ms"] > 0 else None
    row.update(diff=diff, torch_diff=torch_diff, threshold=threshold, status=accuracy_status(diff, threshold))
    row.update(extra)
    return row


def _time(fns: dict, options: BenchOptions) -> dict:
    names = list(fns)
    samples = bench_interleaved_samples([_synced(fns[n], options.device) for n in names], repeats=options.repeat,
                                        warmups=options.warmup, min_seconds=options.min_time)
    return dict(zip(names, samples))


def _run_contiguous(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    g, n, k, fp8 = case["groups"], case["n"], case["k"], case["dtype"] == "fp8"
    dev = options.device
    w = _weights(case["weights"], status)

    status("routing rows")
    gen = torch.Generator().manual_seed(options.seed)
    loads = _loads(case["rows"], g, gen)
    align = grouped_gemm.get_mk_alignment_for_contiguous_layout()
    ids, spans, row = [], [], 0
    for e, s in enumerate(loads):
        ids += [e] * s + [-1] * (_align(s, align) - s)
        spans.append((row, row + s))
        row += _align(s, align)
    ids = torch.tensor(ids, dtype=torch.int32)
    m, rows = ids.numel(), sum(loads)
    valid = ids >= 0
    a = torch.randn(m, k, generator=gen)
    a[~valid] = 0
    busy = [(e, s, t) for e, (s, t) in enumerate(spans) if t > s]

    if fp8:
        qa, sa = per_token_cast_to_fp8(a, False)
        a16 = torch.empty(m, k, dtype=torch.bfloat16)  # rows dequantised beforehand (the bf16 loop)
        for _, s, t in busy:
            a16[s:t] = _dequant_bf16(qa[s:t], sa[s:t], 1, GRAN)
        ops = {"a": (qa.to(dev), sa.to(dev)), "b": (w["q"].to(dev), w["sf"].to(dev))}
        dense_a = (qa[valid].contiguous().to(dev), sa[valid].contiguous().to(dev))
        dense_b = (w["q"][0].to(dev), w["sf"][0].to(dev))
    else:
        a16 = a.to(torch.bfloat16)
        ops = {"a": a16.to(dev), "b": w["b16"].to(dev)}
        dense_a, dense_b = a16[valid].contiguous().to(dev), w["b16"][0].to(dev)
    del a
    a16, b16, ids = a16.to(dev), w["b16"].to(dev), ids.to(dev)
    d = poison_(torch.empty(m, n, dtype=torch.bfloat16, device=dev))
    d_loop = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
    d_dense = torch.empty(rows, n, dtype=torch.bfloat16, device=dev)
    grouped = grouped_gemm.m_grouped_fp8_gemm_nt_contiguous if fp8 else grouped_gemm.m_grouped_bf16_gemm_nt_contiguous
    dense = fp8_gemm.fp8_gemm_nt if fp8 else gemm.bf16_gemm_nt

    def ours():
        grouped(ops["a"], ops["b"], d, ids)

    def bf16_loop(out):
        for e, s, t in busy:
            torch.matmul(a16[s:t], b16[e].T, out=out[s:t])

    def deq_loop():
        (qa_, sa_), (qb_, sb_) = ops["a"], ops["b"]
        for e, s, t in busy:
            torch.matmul(_dequant_bf16(qa_[s:t], sa_[s:t], 1, GRAN), _dequant_bf16(qb_[e], sb_[e], GRAN, GRAN).T,
                         out=d_loop[s:t])

    # Timed first; every call writes the same D, so the last one is checked afterwards.
    status("timing")
    fns = {"ours": ours, "torch": deq_loop if fp8 else (lambda: bf16_loop(d_loop))}
    if fp8:
        d_bf16 = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
        fns["torch_bf16"] = lambda: bf16_loop(d_bf16)
    fns["dense"] = lambda: dense(dense_a, dense_b, d_dense)
    samples = _time(fns, options)

    diff = torch_diff = 0.0
    d_cpu, loop_cpu, ref = d.cpu(), d_loop.cpu(), None
    for e, s, t in busy:
        status(f"checking accuracy: expert {e + 1}/{g}")
        if fp8:
            ref = _dequant_f64(qa[s:t], sa[s:t], 1, GRAN) @ _dequant_f64(w["q"][e], w["sf"][e], GRAN, GRAN).T
        else:
            ref = a16[s:t].cpu().double() @ w["b16"][e].double().T
        diff = max(diff, calc_diff(d_cpu[s:t], ref))
        torch_diff = max(torch_diff, calc_diff(loop_cpu[s:t], ref))
    del ref, d_cpu, loop_cpu

    flops = 2 * rows * n * k
    b_bytes = len(busy) * n * k * (1 if fp8 else 2)
    nbytes = rows * k * (1 if fp8 else 2) + b_bytes + 2 * rows * n
    return _row(case, m, n, k, rows, flops, nbytes, samples, diff, torch_diff, FP8_THRESHOLD if fp8 else BF16_THRESHOLD,
                loads=loads, alignment=align,
                torch_op=("per expert: dequantise rows and weights (q.float() * scales -> bf16) + torch.matmul"
                          if fp8 else "per expert: torch.matmul(bf16, bf16, out=bf16)"),
                dense_op=f"{'fp8_gemm_nt' if fp8 else 'bf16_gemm_nt'} [{rows}, {k}] x expert 0 [{n}, {k}]")


def _masked_inputs(g: int, m_max: int, k: int, seed: int, fp8: bool) -> dict:
    """A [G, Mmax, K] of the masked cases (the same logical values for every expected_m and dtype)."""
    gen = torch.Generator().manual_seed(seed + 2)
    a = torch.randn(g * m_max, k, generator=gen)
    if not fp8:
        return {"a16": a.to(torch.bfloat16).view(g, m_max, k)}
    qa, sa = per_token_cast_to_fp8(a, False)
    a16 = _dequant_bf16(qa, sa, 1, GRAN)
    return {"qa": qa.view(g, m_max, k), "sa": sa.view(g, m_max, -1), "a16": a16.view(g, m_max, k)}


def _run_masked(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    g, n, k, em, m_max, fp8 = (case["groups"], case["n"], case["k"], case["expected_m"], case["m_max"],
                               case["dtype"] == "fp8")
    dev = options.device
    w = _weights(case["weights"], status)

    # The operands and the full [G, Mmax, N] float64 reference do not depend on expected_m: built once
    # per dtype and kept with the weights.
    inputs_key = ("masked", case["dtype"], m_max)
    if inputs_key not in w:
        status("preparing A")
        inp = _masked_inputs(g, m_max, k, options.seed, fp8)
        ref = torch.empty(g, m_max, n, dtype=torch.float64)
        for e in range(g):
            status(f"float64 reference: expert {e + 1}/{g}")
            if fp8:
                ref[e] = (_dequant_f64(inp["qa"][e], inp["sa"][e], 1, GRAN)
                          @ _dequant_f64(w["q"][e], w["sf"][e], GRAN, GRAN).T)
            else:
                ref[e] = inp["a16"][e].double() @ w["b16"][e].double().T
        inp["ref"] = ref
        w[inputs_key] = inp
    inp = w[inputs_key]

    gen = torch.Generator().manual_seed(options.seed + 3 + em)
    lo, hi = max(1, (em + 1) // 2), min(m_max, em + em // 2)
    masked = torch.randint(lo, hi + 1, (g,), generator=gen, dtype=torch.int32).clamp_(max=m_max)
    counts = masked.tolist()
    rows = sum(counts)
    busy = [(e, c) for e, c in enumerate(counts) if c > 0]

    a16, b16, masked_d = inp["a16"].to(dev), w["b16"].to(dev), masked.to(dev)
    if fp8:
        ops = {"a": (inp["qa"].to(dev), inp["sa"].to(dev)), "b": (w["q"].to(dev), w["sf"].to(dev))}
    else:
        ops = {"a": a16, "b": b16}
    d = poison_(torch.empty(g, m_max, n, dtype=torch.bfloat16, device=dev))
    d_loop = torch.empty(g, m_max, n, dtype=torch.bfloat16, device=dev)
    grouped = grouped_gemm.m_grouped_fp8_gemm_nt_masked if fp8 else grouped_gemm.m_grouped_bf16_gemm_nt_masked

    def ours():
        grouped(ops["a"], ops["b"], d, masked_d, em)

    def bf16_loop(out):
        for e, c in busy:
            torch.matmul(a16[e, :c], b16[e].T, out=out[e, :c])

    def deq_loop():
        (qa_, sa_), (qb_, sb_) = ops["a"], ops["b"]
        for e, c in busy:
            torch.matmul(_dequant_bf16(qa_[e, :c], sa_[e, :c], 1, GRAN), _dequant_bf16(qb_[e], sb_[e], GRAN, GRAN).T,
                         out=d_loop[e, :c])

    status("timing")  # then check the D of the last call
    fns = {"ours": ours, "torch": deq_loop if fp8 else (lambda: bf16_loop(d_loop))}
    if fp8:
        d_bf16 = torch.empty(g, m_max, n, dtype=torch.bfloat16, device=dev)
        fns["torch_bf16"] = lambda: bf16_loop(d_bf16)
    samples = _time(fns, options)

    status("checking accuracy")
    d_cpu, loop_cpu = d.cpu(), d_loop.cpu()
    diff = max((calc_diff(d_cpu[e, :c], inp["ref"][e, :c]) for e, c in busy), default=0.0)
    torch_diff = max((calc_diff(loop_cpu[e, :c], inp["ref"][e, :c]) for e, c in busy), default=0.0)
    untouched = all(bool(torch.isnan(d_cpu[e, c:].float()).all()) for e, c in enumerate(counts))
    if not untouched:  # rows at or beyond masked_m must be left alone
        diff = float("nan")
    del d_cpu, loop_cpu

    flops = 2 * rows * n * k
    nbytes = rows * k * (1 if fp8 else 2) + len(busy) * n * k * (1 if fp8 else 2) + 2 * rows * n
    return _row(case, g * m_max, n, k, rows, flops, nbytes, samples, diff, torch_diff,
                FP8_THRESHOLD if fp8 else BF16_THRESHOLD, masked_m=counts, m_max=m_max,
                padding_untouched=untouched,
                torch_op=("per expert: dequantise valid rows and weights (q.float() * scales -> bf16) + torch.matmul"
                          if fp8 else "per expert: torch.matmul(valid rows, weights, out=bf16)"))


def _run_k_grouped(case: dict, options: BenchOptions, status: Callable[[str], None]) -> dict:
    g, m, n = case["groups"], case["m"], case["n"]  # D [G, m, n]; K = the routed rows, grouped
    dev = options.device
    status("preparing operands")
    gen = torch.Generator().manual_seed(options.seed + 4)
    loads = _loads(case["rows"], g, gen)
    align = grouped_gemm.get_mk_alignment_for_contiguous_layout()
    ks = [_align(s, align) for s in loads]
    total = sum(ks)
    a = torch.zeros(total, m, dtype=torch.bfloat16)  # dY of the routed rows, zero padding rows
    b = torch.zeros(total, n, dtype=torch.bfloat16)  # X of the routed rows
    spans, row = [], 0
    for s, kg in zip(loads, ks):
        a[row:row + s] = torch.randn(s, m, generator=gen).to(torch.bfloat16)
        b[row:row + s] = torch.randn(s, n, generator=gen).to(torch.bfloat16)
        spans.append((row, row + kg))
        row += kg
    c = torch.randn(g, m, n, generator=gen)
    a, b, c = a.to(dev), b.to(dev), c.to(dev)
    ks_dev = torch.tensor(ks, dtype=torch.int32, device=dev)
    d = poison_(torch.empty(g, m, n, device=dev))
    d_loop = torch.empty(g, m, n, device=dev)
    tmp = torch.empty(m, n, dtype=torch.bfloat16, device=dev)

    def ours():
        grouped_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_dev, c=c)

    def loop():
        for e, (s, t) in enumerate(spans):
            if t > s:
                torch.matmul(a[s:t].T, b[s:t], out=tmp)
                torch.add(c[e], tmp, out=d_loop[e])
            else:
                d_loop[e].copy_(c[e])

    status("timing")  # then check the D of the last call
    samples = _time({"ours": ours, "torch": loop}, options)

    status("checking accuracy")
    diff = torch_diff = 0.0
    d_cpu, loop_cpu = d.cpu(), d_loop.cpu()
    for e, (s, t) in enumerate(spans):
        ref = c[e].cpu().double() + a[s:t].cpu().double().T @ b[s:t].cpu().double()
        diff = max(diff, calc_diff(d_cpu[e], ref))
        torch_diff = max(torch_diff, calc_diff(loop_cpu[e], ref))
    del d_cpu, loop_cpu

    rows = sum(loads)
    flops = 2 * rows * m * n
    nbytes = 2 * rows * (m + n) + 4 * 2 * g * m * n  # A, B (valid rows), C and D in fp32
    return _row(case, m, n, total, rows, flops, nbytes, samples, diff, torch_diff, BF16_THRESHOLD, loads=loads, ks=ks,
                torch_op="per expert: torch.matmul(dY_g.T, X_g, out=bf16) + C[g] in fp32")


BENCH = KernelBench(name="moe", description="MoE grouped GEMMs (contiguous FP8/BF16, masked BF16/FP8, k-grouped BF16) "
                                            "vs a torch loop over the experts and our dense GEMM",
                    cases=cases, run=run, columns=COLUMNS, ratio_desc="torch per-expert loop time / ours time")
