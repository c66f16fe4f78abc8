"""pytest-benchmark suite of bf16_gemm_nt (bf16 output) against torch.matmul, in one process.

Run it with

    python -m pytest python/tests/bench_bf16.py -m bench

(the host backend runs on torch's OpenMP threads, so the default OMP_WAIT_POLICY is the one to measure.)

The file name does not match test_*.py on purpose: a plain `pytest` run never collects it, while
passing the path explicitly does. Its tests carry the `bench` mark, which pyproject's addopts
deselects by default; the `-m bench` given on the command line overrides that.

Each round of ours is preceded (outside pytest-benchmark's timer, as the `setup` of the round)
by one timed torch.matmul call on the same operands, so the two alternate like in
`deepgemm-ascend bench`. torch's median, the ratio torch_time / ours_time and the TFLOPS of
both go to `benchmark.extra_info` (shown by --benchmark-json and --benchmark-columns).
"""
import os
import statistics
import time

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff
from deepgemm_ascend.testing.shapes import BENCH_BF16_MNK

pytest.importorskip("pytest_benchmark", reason="needs pytest-benchmark (pip install pytest-benchmark)")

pytestmark = pytest.mark.bench

ROUNDS, WARMUP_ROUNDS = 5, 1


@pytest.fixture(scope="module", autouse=True)
def _same_cores_as_ours():
    """torch gets as many threads as deepgemm_ascend uses AI cores."""
    old = torch.get_num_threads()
    torch.set_num_threads(max(1, dg.get_num_ai_cores()))
    yield
    torch.set_num_threads(old)


def _sampled_diff(a, b, d, rows=64):
    """calc_diff of up to `rows` evenly spread rows of D against a float64 reference (cheap sanity check)."""
    m = a.shape[0]
    if m == 0:
        return 0.0
    idx = torch.linspace(0, m - 1, min(m, rows)).long().unique()
    ref = a[idx].double() @ b.double().T
    return calc_diff(d[idx], ref)


@pytest.mark.parametrize("m,n,k", BENCH_BF16_MNK, ids=[f"{m}x{n}x{k}" for m, n, k in BENCH_BF16_MNK])
def test_bf16_gemm_nt(benchmark, m, n, k):
    a = torch.randn(m, k).bfloat16()
    b = torch.randn(n, k).bfloat16()
    d = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
    d_torch = torch.empty(m, n, dtype=torch.bfloat16)
    torch_seconds = []

    def torch_round():
        t0 = time.perf_counter()
        torch.matmul(a, b.T, out=d_torch)
        torch_seconds.append(time.perf_counter() - t0)

    benchmark.group = "bf16_gemm_nt"
    benchmark.pedantic(dg.bf16_gemm_nt, args=(a, b, d), setup=torch_round, rounds=ROUNDS,
                       warmup_rounds=WARMUP_ROUNDS)

    diff = _sampled_diff(a, b, d)
    flops = 2 * m * n * k
    nbytes = 2 * (m * k + n * k + m * n)
    torch_s = statistics.median(torch_seconds[WARMUP_ROUNDS:] or torch_seconds)
    info = {"m": m, "n": n, "k": k, "torch_ms": torch_s * 1e3, "torch_tflops": flops / torch_s / 1e12,
            "diff": diff, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "")}
    stats = getattr(benchmark, "stats", None)
    if stats is not None:  # None under --benchmark-disable
        ours_s = stats.stats.median
        info.update(ours_ms=ours_s * 1e3, tflops=flops / ours_s / 1e12, gbps=nbytes / ours_s / 1e9,
                    ratio=torch_s / ours_s)
    benchmark.extra_info.update(info)
    assert diff < 1e-5, f"calc_diff {diff:.3g} against the float64 reference"
