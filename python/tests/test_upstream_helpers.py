"""Upstream names that are knobs or test utilities: the runtime knobs, deep_gemm.testing's
helpers, deep_gemm.utils' distributed helpers."""
import os
import socket
import subprocess
import sys

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import testing as dgt
from deepgemm_ascend.testing.distributed import run_ranks


def test_knobs_are_validated_and_kept():
    assert dg.get_tc_util() == 100
    dg.set_tc_util(80)
    assert dg.get_tc_util() == 80
    dg.set_tc_util(0)
    assert dg.get_tc_util() == 100  # upstream: 0 reads as 100
    for bad in (-1, 101, 50.0, True):
        with pytest.raises(ValueError, match="^new_tc_util"):
            dg.set_tc_util(bad)
    assert dg.get_pdl() is False
    dg.set_pdl(True)
    assert dg.get_pdl() is True
    dg.set_pdl(False)
    with pytest.raises(TypeError, match="^new_enable_pdl"):
        dg.set_pdl(1)
    dg.set_ignore_compile_dims(True)
    dg.set_ignore_compile_dims(False)
    with pytest.raises(TypeError, match="^new_value"):
        dg.set_ignore_compile_dims("yes")


def test_block_size_multiple_of_constrains_the_tiles():
    a, b = torch.randn(40, 256).bfloat16(), torch.randn(72, 256).bfloat16()
    ref = a.double() @ b.double().T
    try:
        for value in (64, (16, 128), 1):
            dg.set_block_size_multiple_of(value)
            d = torch.full((40, 72), float("nan")).bfloat16()
            dg.bf16_gemm_nt(a, b, d)
            assert (d.double() - ref).abs().max() <= 2.0 ** -7 * ref.abs().max()
            want = (value, value) if isinstance(value, int) else value
            assert dg._C.get_block_size_multiple_of() == want
        for bad in (48, 0, 512):
            with pytest.raises(ValueError, match="^new_value"):
                dg.set_block_size_multiple_of(bad)
        with pytest.raises(TypeError, match="^new_value"):
            dg.set_block_size_multiple_of((16, 16, 16))
    finally:
        dg.set_block_size_multiple_of(1)


def test_testing_helpers():
    x = torch.arange(12, dtype=torch.float32).view(3, 4)
    assert dgt.count_bytes(x, (x[0], None), [x.bfloat16()]) == 48 + 16 + 24
    dgt.assert_bitwise_equal(x, x.clone())
    y = x.clone()
    y[2, 1] = -0.0 if x[2, 1] == 0 else 99.0
    first = r"bitwise mismatch \(lbl\): 2 of 48 bytes differ; first byte 38 \(element 9 at \(2, 1\)"
    with pytest.raises(AssertionError, match=first):
        dgt.assert_bitwise_equal(x, y, "lbl")
    with pytest.raises(AssertionError, match="dtype mismatch"):
        dgt.assert_bitwise_equal(x, x.double())
    ran = []
    dgt.test_filter(lambda: False)(lambda: ran.append(1))()
    dgt.test_filter(lambda: True)(lambda: ran.append(2))()
    assert ran == [2]
    os.environ["DGA_TEST_IGNORED"] = "1"
    seen = []
    dgt.ignore_env("DGA_TEST_IGNORED", lambda: True)(lambda: seen.append(os.environ.get("DGA_TEST_IGNORED")))()
    assert seen == [None] and os.environ.pop("DGA_TEST_IGNORED") == "1"
    assert dgt.get_arch_major() == 10


def test_bench_kineto_times_our_ops():
    a, b, d = torch.randn(128, 256).bfloat16(), torch.randn(128, 256).bfloat16(), torch.empty(128, 128).bfloat16()
    t = dgt.bench_kineto(lambda: dg.bf16_gemm_nt(a, b, d), "bf16_gemm", num_tests=3, suppress_kineto_output=True)
    assert 0 < t < 10
    t1, t2 = dgt.bench_kineto(lambda: dg.bf16_gemm_nt(a, b, d), ("bf16", "no_such_kernel"), num_tests=2)
    assert t1 > 0 and t2 > 0
    assert dgt.bench_kineto(lambda: torch.mm(a.float(), b.float().T), "gemm", num_tests=2) > 0  # wall time
    calls = []
    os.environ["DGA_BENCH_KINETO_MAX_TESTS"] = "2"
    try:
        dgt.bench_kineto(lambda: calls.append(1), "x", num_tests=30)
    finally:
        del os.environ["DGA_BENCH_KINETO_MAX_TESTS"]
    assert len(calls) == 1 + 2  # the first-use call, then the capped timed calls


def _uneven(rank, world, group):
    from deepgemm_ascend.utils import uneven_all_gather
    t = torch.full((rank + 1, 3), float(rank))
    return uneven_all_gather(t, dim=0, group=group).tolist()


def test_uneven_all_gather_many_ranks():
    out = run_ranks(3, _uneven, timeout=120)
    want = [[float(r)] * 3 for r in range(3) for _ in range(r + 1)]
    assert all(o == want for o in out)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_init_dist_joins_a_gloo_group():
    port = _free_port()
    code = ("from deepgemm_ascend.utils import init_dist; import torch.distributed as dist; "
            "r, w, g = init_dist(0, 1); print(r, w, dist.get_backend(), g.size()); dist.destroy_process_group()")
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="1", RANK="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "1", "gloo", "1"]


# One rank of a job of two nodes with two local ranks each (argv: node, local rank): prints on every rank,
# then once per node; global rank 3 reaches its last dist_print a second late, and every rank's stderr
# reports when it entered and left that call.
_DIST_PRINT_RANK = """
import sys, time
import torch.distributed as dist
from deepgemm_ascend.utils.dist import dist_print, init_dist
rank, world, _ = init_dist(int(sys.argv[2]), 2)
dist_print(f"every {rank}")
dist_print(f"node {rank}", once_in_node=True)
dist_print(once_in_node=True)
if rank == 3:
    time.sleep(1.0)
entered = time.monotonic()
dist_print(f"late {rank}", once_in_node=True)
print(rank, entered, time.monotonic(), file=sys.stderr)
dist.destroy_process_group()
"""


def test_dist_print_once_per_node_then_a_barrier():
    port = _free_port()
    procs = []
    for node in range(2):
        for local in range(2):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2", RANK=str(node))
            procs.append(subprocess.Popen([sys.executable, "-c", _DIST_PRINT_RANK, str(node), str(local)], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    for rank, (out, _) in enumerate(outs):  # ranks 0 and 2 are their nodes' local rank 0
        want = [f"every {rank}"] + ([f"node {rank}", "", f"late {rank}"] if rank % 2 == 0 else [])
        assert out.splitlines() == want, (rank, out)
    times = {int(r): (float(a), float(b)) for r, a, b in (err.split()[-3:] for _, err in outs)}
    late_entry = times[3][0]
    assert all(left >= late_entry for _, left in times.values())  # nobody left before rank 3 arrived


def test_dist_print_validates_and_needs_init_dist(monkeypatch):
    import deepgemm_ascend.utils.dist as dgd
    monkeypatch.setattr(dgd, "_local_rank", None)
    with pytest.raises(RuntimeError, match="^dist_print: call init_dist first"):
        dgd.dist_print("x")
    monkeypatch.setattr(dgd, "_local_rank", 0)  # argument errors come before any collective
    with pytest.raises(TypeError, match="^s: expected a str, got int"):
        dgd.dist_print(5)
    with pytest.raises(TypeError, match="^once_in_node: expected a bool, got str"):
        dgd.dist_print("x", once_in_node="yes")


@pytest.mark.parametrize("layout", ["nt", "nn", "tn", "tt"])
def test_cublaslt_gemm_is_torchs_matmul(layout):
    torch.manual_seed(3)
    m, n, k = 33, 40, 96
    a = torch.randn(k, m) if layout[0] == "t" else torch.randn(m, k)
    b = torch.randn(k, n) if layout[1] == "n" else torch.randn(n, k)
    a, b = a.bfloat16(), b.bfloat16()
    x = a.double().T if layout[0] == "t" else a.double()
    y = b.double() if layout[1] == "n" else b.double().T
    c = torch.randn(m, n)
    d = torch.full((m, n), float("nan"))
    getattr(dg, f"cublaslt_gemm_{layout}")(a, b, d, c)
    assert ((d.double() - (x @ y + c.double())).abs() <= 1e-4 * (x @ y).abs().max()).all()
    d16 = torch.full((m, n), float("nan")).bfloat16()
    getattr(dg, f"cublaslt_gemm_{layout}")(a, b, d16)
    assert (d16.double() - x @ y).abs().max() <= 2.0 ** -7 * (x @ y).abs().max()
    with pytest.raises(ValueError, match="^d: expected shape"):
        getattr(dg, f"cublaslt_gemm_{layout}")(a, b, torch.empty(m, n + 1))
    with pytest.raises(TypeError, match="^b: expected a's dtype"):
        getattr(dg, f"cublaslt_gemm_{layout}")(a, b.float(), d)


def test_cublaslt_gemm_takes_unscaled_fp8():
    """Upstream's FP8 benchmark baseline: cuBLASLt's FP8 GEMM with unit scales (D = A @ B.T in fp32)."""
    torch.manual_seed(4)
    a, b = (torch.randn(17, 64) * 4).to(torch.float8_e4m3fn), (torch.randn(24, 64) * 4).to(torch.float8_e4m3fn)
    d = torch.full((17, 24), float("nan")).bfloat16()
    c = torch.randn(17, 24)
    dg.cublaslt_gemm_nt(a, b, d, c)
    want = a.double() @ b.double().T + c.double()
    assert (d.double() - want).abs().max() <= 2.0 ** -7 * want.abs().max()
    with pytest.raises(TypeError, match="^d: expected bfloat16, float16 or float32, got"):
        dg.cublaslt_gemm_nt(a, b, torch.empty(17, 24, dtype=torch.float8_e4m3fn))
