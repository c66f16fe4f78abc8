"""Runtime knobs, environment switches, GIL release and concurrency."""
import os
import subprocess
import sys
import threading

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import runtime
from deepgemm_ascend.testing import calc_diff


def run_python(code, **env):
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120)


def test_num_ai_cores_and_aliases():
    max_cores = dg.info()["max_ai_cores"]
    try:
        dg.set_num_ai_cores(1)
        assert dg.get_num_ai_cores() == 1 and dg.get_num_sms() == 1
        dg.set_num_sms(0)
        assert dg.get_num_ai_cores() == max_cores
        with pytest.raises(ValueError, match="num_ai_cores"):
            dg.set_num_ai_cores(max_cores + 1)
        with pytest.raises(ValueError, match="num_ai_cores"):
            dg.set_num_ai_cores(-1)
        with pytest.raises(TypeError, match="num"):
            dg.set_num_ai_cores(1.5)
    finally:
        dg.set_num_ai_cores(0)


def test_info_fields():
    info = dg.info()
    assert info["version"] == dg.__version__
    assert "host" in info["backends"]
    assert info["host_isa"] in info["host_isas"] and info["host_isas"][-1] == "scalar"
    # avx512 and avx2 race their FMA loops once; avx512 is the default only where it wins by the margin.
    both = {"avx512", "avx2"} <= set(info["host_isas"])
    assert ("avx512_fma_gain" in info) == both
    if both and info["host_isas"][0] == "avx512" and "DGA_HOST_ISA" not in os.environ:
        wins = info["avx512_fma_gain"] >= info["avx512_min_fma_gain"]
        assert info["host_isa"] == ("avx512" if wins else "avx2")


def test_measured_host_peak_per_isa():
    for isa in dg.info()["host_isas"]:
        dg.set_host_isa(isa)
        try:
            p = runtime.measure_host_peak(0.02)
        finally:
            dg.set_host_isa(None)
        assert p["isa"] == isa and p["cores"] == dg.get_num_ai_cores() and p["tflops"] > 0
    with pytest.raises(ValueError, match="budget_s"):
        runtime.measure_host_peak(0)


def test_forcing_an_unavailable_isa_is_an_error():
    unavailable = [i for i in ("amx", "avx512bf16", "avx512", "avx2") if i not in dg.info()["host_isas"]]
    if not unavailable:
        pytest.skip("every host ISA is available here")
    with pytest.raises(RuntimeError, match="not available"):
        dg.set_host_isa(unavailable[0])
    with pytest.raises(ValueError, match="unknown host ISA"):
        dg.set_host_isa("sse9")


def test_env_forced_isa_in_subprocess():
    code = "import deepgemm_ascend as dg; print(dg.info()['host_isa'])"
    out = run_python(code, DGA_HOST_ISA="scalar")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "scalar"


def test_print_configs():
    code = ("import torch, deepgemm_ascend as dg\n"
            "a = torch.randn(64, 128).bfloat16(); b = torch.randn(96, 128).bfloat16(); d = torch.empty(64, 96)\n"
            "dg.bf16_gemm_nt(a, b, d); dg.bf16_gemm_nt(a, b, d)\n")
    out = run_python(code, DG_PRINT_CONFIGS="1")
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stderr.splitlines() if "GemmConfig" in l]
    assert len(lines) == 1 and "m=64, n=96, k=128" in lines[0], out.stderr


@pytest.mark.skipif("npu-model" not in dg.info()["backends"], reason="no npu-model backend in this build")
def test_print_configs_on_the_npu_kernels():
    """The NPU dispatch prints its plans too: a grouped GEMM's names its group count."""
    code = ("import torch, deepgemm_ascend as dg\n"
            "dg.runtime.set_backend('npu-model')\n"
            "ids = torch.tensor([0] * 128 + [1] * 128, dtype=torch.int32)\n"
            "a, b = torch.randn(256, 64).bfloat16(), torch.randn(2, 32, 64).bfloat16()\n"
            "dg.m_grouped_bf16_gemm_nt_contiguous(a, b, torch.empty(256, 32).bfloat16(), ids)\n")
    out = run_python(code, DG_PRINT_CONFIGS="1")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "GemmConfig" in line]
    assert len(lines) == 1 and lines[0].startswith("[deepgemm_ascend] bf16 ") and "groups=2" in lines[0], out.stderr


def test_emulated_ascend950_plans_with_the_npu_budget():
    code = ("import torch, deepgemm_ascend as dg\n"
            "print(dg.info()['host_arch'])\n"
            "a = torch.randn(512, 1024).bfloat16(); d = torch.empty(512, 512).bfloat16()\n"
            "dg.bf16_gemm_nt(a, a[:512], d)\n"
            "assert dg.testing.calc_diff(d, a.double() @ a[:512].double().T) < 1e-5\n")
    out = run_python(code, DGA_HOST_ARCH="ascend950", DGA_CHECKED="1", DG_PRINT_CONFIGS="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ascend950"
    config = [line for line in out.stderr.splitlines() if "GemmConfig" in line]
    assert len(config) == 1 and "cores=32" in config[0], out.stderr  # the 950's cube cores, not this CPU's
    tiles = config[0].split("block=")[1].split(",")[0]
    bm, bn, bk = (int(x) for x in tiles.split("x"))
    l1_bytes = 2 * (bm + bn) * bk * 2  # two stages of bf16 A and B tiles
    assert l1_bytes <= 512 * 1024 and bm * bn * 4 <= 256 * 1024, config[0]


def test_bad_host_arch_is_an_error():
    out = run_python("import deepgemm_ascend as dg; dg.info()", DGA_HOST_ARCH="ascend910")
    assert out.returncode != 0 and "ValueError: DGA_HOST_ARCH: expected 'host' or 'ascend950'" in out.stderr


def test_checked_mode_run_is_clean():
    code = ("import torch, deepgemm_ascend as dg\n"
            "assert dg.is_checked_mode()\n"
            "a = torch.randn(300, 200).bfloat16(); b = torch.randn(170, 200).bfloat16(); d = torch.empty(300, 170)\n"
            "dg.bf16_gemm_nt(a, b, d)\n"
            "ref = a.double() @ b.double().T\n"
            "assert dg.testing.calc_diff(d, ref) < 1e-5\n")
    out = run_python(code, DGA_CHECKED="1")
    assert out.returncode == 0, out.stderr


def test_gil_is_released_during_kernels():
    a, b = torch.randn(1024, 2048).bfloat16(), torch.randn(1024, 2048).bfloat16()
    d = torch.empty(1024, 1024)
    ticks, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = ticks[0]
        for _ in range(3):
            dg.bf16_gemm_nt(a, b, d)
        during = ticks[0] - before
    finally:
        stop.set()
        t.join()
    assert during > 0, "a Python thread made no progress while kernels ran: the GIL was held"


def test_threads_calling_kernels_concurrently():
    problems = []
    for i in range(6):
        m, n, k = 40 + 7 * i, 30 + 11 * i, 64 + 16 * i
        problems.append((torch.randn(m, k).bfloat16(), torch.randn(n, k).bfloat16()))
    errors = []

    def work(idx):
        a, b = problems[idx % len(problems)]
        for _ in range(20):
            d = torch.empty(a.shape[0], b.shape[0])
            dg.bf16_gemm_nt(a, b, d)
            if calc_diff(d, a.double() @ b.double().T) > 1e-5:
                errors.append(idx)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# ---- the npu-model backend ---------------------------------------------------------------------------
from deepgemm_ascend import runtime as _rt  # noqa: E402

needs_model = pytest.mark.skipif("npu-model" not in dg.info()["backends"],
                                 reason="built without the AscendC devkit (no libdga_npu_model)")


def test_backend_knob_validates_its_argument():
    before = _rt.get_backend()
    with pytest.raises(TypeError, match="^name: expected a str"):
        _rt.set_backend(1)
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        _rt.set_backend("gpu")
    assert _rt.get_backend() == before
    assert dg.info()["backend"] == before


@needs_model
def test_npu_model_backend_runs_the_npu_kernel_and_refuses_what_has_none(monkeypatch):
    before = _rt.get_backend()
    _rt.set_backend("npu-model")
    try:
        assert dg.info()["backend"] == "npu-model"
        a, b = torch.randn(33, 96).bfloat16(), torch.randn(40, 96).bfloat16()
        d = torch.full((33, 40), float("nan")).bfloat16()
        dg.bf16_gemm_nt(a, b, d)
        ref = a.double() @ b.double().T
        assert (d.double() - ref).abs().max() <= 2.0 ** -7 * ref.abs().max()
        # A call the NPU kernels do not take (e5m2) says so instead of running the host backend.
        a5 = torch.randn(64, 128).to(torch.float8_e5m2)
        b4 = torch.randn(64, 128).to(torch.float8_e4m3fn)
        sf = torch.ones(64, 1)
        y = torch.full((64, 64), 5.0).bfloat16()
        with pytest.raises(NotImplementedError, match="^b: .*float8_e4m3fn operands on the NPU"):
            dg.fp8_gemm_nt((a5, sf), (b4, sf), y, recipe=(1, 1, 128))
        assert bool((y == 5.0).all())
        # A launch above the budget (DGA_NPU_MODEL_MAX_MACS, here 2^20; default 2^34) is refused before it
        # runs and writes nothing; one within it runs.
        monkeypatch.setenv("DGA_NPU_MODEL_MAX_MACS", str(2 ** 20))
        big_a, big_b = torch.randn(128, 128).bfloat16(), torch.randn(128, 128).bfloat16()
        out = torch.full((128, 128), 3.0).bfloat16()
        with pytest.raises(NotImplementedError, match="2097152 multiply-adds.*budget of 1048576.*too large for the model"):
            dg.bf16_gemm_nt(big_a, big_b, out)
        assert bool((out == 3.0).all())
        sa, sb, small = big_a[:64].contiguous(), big_b[:64].contiguous(), torch.full((64, 64), 3.0).bfloat16()
        dg.bf16_gemm_nt(sa, sb, small)
        ref = sa.double() @ sb.double().T
        assert (small.double() - ref).abs().max() <= 2.0 ** -7 * ref.abs().max()
        monkeypatch.setenv("DGA_NPU_MODEL_MAX_MACS", "2^20")
        with pytest.raises(ValueError, match="DGA_NPU_MODEL_MAX_MACS.*positive integer"):
            dg.bf16_gemm_nt(big_a, big_b, out)
    finally:
        _rt.set_backend(before)
