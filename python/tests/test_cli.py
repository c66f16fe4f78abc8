"""The `deepgemm-ascend` command line (info, bench and model), through subprocesses and in process."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from deepgemm_ascend import cli
from deepgemm_ascend.bench import KERNELS, BenchOptions, KernelBench, resolve_kernels

INFO_KEYS = {"version", "backends", "cann", "cpu_vendor", "cpu_features", "host_isas", "host_isa", "ai_cores",
             "max_ai_cores", "checked", "torch"}
ROW_KEYS = {"kernel", "layout", "m", "n", "k", "out_dtype", "ours_ms", "ours_tflops", "ours_gbps", "torch_ms",
            "torch_tflops", "ratio", "diff", "status", "flops", "bytes"}
SMALL = ["--shapes", "64,96,128;1,33,17", "--layouts", "nt,tn", "--repeat", "1", "--warmup", "0",
         "--min-time", "0"]


def run_module(*args, cwd, timeout=120, **env):
    """`python -m deepgemm_ascend ARGS` from a neutral directory (so the installed package is used).

    OMP_WAIT_POLICY is removed from the environment unless given in `env`.
    """
    environ = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "deepgemm_ascend", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=environ)


def test_console_script_on_path(tmp_path):
    exe = shutil.which("deepgemm-ascend")
    if exe is None:
        pytest.fail("the `deepgemm-ascend` console script is not on PATH (the README's quick start runs "
                    "`deepgemm-ascend bench`): install the package with `python -m pip install .` and put the "
                    f"environment's scripts directory (next to {sys.executable}) on PATH")
    res = subprocess.run([exe, "info"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    for label in ("version", "backends", "CANN found", "CPU vendor", "host ISA", "AI cores", "checked mode", "torch"):
        assert label in res.stdout


def test_version_and_bench_help(tmp_path):
    import deepgemm_ascend as dg
    res = run_module("--version", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.strip() == f"deepgemm-ascend {dg.__version__}", res.stderr
    res = run_module("bench", "--help", cwd=tmp_path)
    assert res.returncode == 0 and "default: bf16" in " ".join(res.stdout.split())


def test_info_json(tmp_path):
    res = run_module("info", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert INFO_KEYS <= set(info)
    assert "host" in info["backends"]
    assert info["host_isa"] in info["host_isas"]
    assert 1 <= info["ai_cores"] <= info["max_ai_cores"]
    assert isinstance(info["checked"], bool) and isinstance(info["cann"], bool)


def test_bench_json_stdout(tmp_path):
    res = run_module("bench", *SMALL, "--json", "-", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)  # stdout holds only the JSON; the table went to stderr
    assert INFO_KEYS <= set(doc["machine"])
    assert doc["machine"]["omp_wait_policy"] == ""  # bench runs under the environment's policy
    peak = doc["machine"]["measured_peak"]  # the register-only loop of the active ISA's instruction
    assert peak["tflops"] > 0 and peak["isa"] == doc["machine"]["host_isa"]
    assert doc["command"].startswith("deepgemm-ascend bench")
    rows = doc["results"]
    assert [(r["layout"], r["m"], r["n"], r["k"]) for r in rows] == [
        ("nt", 64, 96, 128), ("tn", 64, 96, 128), ("nt", 1, 33, 17), ("tn", 1, 33, 17)]
    for r in rows:
        assert ROW_KEYS <= set(r), r
        assert r["kernel"] == "bf16" and r["out_dtype"] == "bf16"
        assert r["peak_frac"] == pytest.approx(r["ours_tflops"] / peak["tflops"])
        assert r["vs_alone"] == pytest.approx(r["ours_ms"] / r["alone_ms"])  # interleaved with torch / back to back
        assert r["status"] == "ok"
        assert 0 <= r["diff"] < 1e-5
        assert r["ours_ms"] > 0 and r["torch_ms"] > 0
        assert r["ratio"] == pytest.approx(r["torch_ms"] / r["ours_ms"])
        assert r["flops"] == 2 * r["m"] * r["n"] * r["k"]
        assert r["bytes"] == 2 * (r["m"] * r["k"] + r["n"] * r["k"] + r["m"] * r["n"])
        assert r["ours_tflops"] == pytest.approx(r["flops"] / (r["ours_ms"] * 1e-3) / 1e12)
        assert r["ours_gbps"] == pytest.approx(r["bytes"] / (r["ours_ms"] * 1e-3) / 1e9)
    assert doc["geomean_ratio"] > 0
    assert "geometric-mean ratio" in res.stderr and "ours TFLOPS" in res.stderr
    # stderr is not a terminal here: one progress line per finished case, no \r bar
    assert "[4/4] bf16 tn 1x33x17 bf16" in res.stderr and "\r" not in res.stderr


def test_bench_fp8_json_stdout(tmp_path):
    res = run_module("bench", "--kernels", "fp8", "--shapes", "64,96,256", "--repeat", "1", "--warmup", "0",
                     "--json", "-", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    (row,) = doc["results"]
    assert [row[key] for key in ("kernel", "recipe", "layout", "m", "n", "k")] == ["fp8", "block", "nt", 64, 96, 256]
    assert row["status"] == "ok" and 0 <= row["diff"] < 1e-3
    for base, ratio in (("torch", "ratio"), ("torch_bf16", "ratio_torch_bf16"), ("ours_bf16", "ratio_ours_bf16")):
        assert row[f"{base}_ms"] > 0
        assert row[ratio] == pytest.approx(row[f"{base}_ms"] / row["ours_ms"])
    assert doc["geomean_ratio_by_kernel"]["fp8"] == pytest.approx(row["ratio"])
    assert "vs deq+mm" in res.stderr and "vs our bf16" in res.stderr  # the fp8 table's own columns


def test_bench_moe_json_stdout(tmp_path):
    """moe reads --shapes "M,N,K" as M routed rows over 32 experts (tiny here): every case checks and times ok."""
    res = run_module("bench", "--kernels", "moe", "--shapes", "256,128,256", "--repeat", "1", "--warmup", "0",
                     "--min-time", "0", "--json", "-", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)["results"]
    assert [(r["variant"], r["dtype"]) for r in rows] == [
        ("contiguous", "fp8"), ("contiguous", "bf16"), ("masked", "bf16"), ("masked", "fp8"), ("k-grouped", "bf16")]
    for r in rows:
        assert r["kernel"] == "moe" and r["status"] == "ok", r
        assert 0 <= r["diff"] < (1e-3 if r["dtype"] == "fp8" else 1e-5)
        assert r["ours_ms"] > 0 and r["ratio"] == pytest.approx(r["torch_ms"] / r["ours_ms"])
        dims = (r["m"], r["n"]) if r["variant"] == "k-grouped" else (r["n"], r["k"])
        assert r["flops"] == 2 * r["rows"] * dims[0] * dims[1]  # valid rows only
    contiguous, masked = rows[0], rows[3]
    assert contiguous["groups"] == 32 and contiguous["rows"] == sum(contiguous["loads"]) == 256
    assert contiguous["m"] % 128 == 0 and contiguous["ratio_dense"] > 0 and contiguous["ratio_torch_bf16"] > 0
    assert masked["expected_m"] == 8 and masked["rows"] == sum(masked["masked_m"]) and masked["padding_untouched"]
    assert rows[4]["groups"] == 8 and rows[4]["rows"] == sum(rows[4]["loads"]) == 256
    assert "vs dense" in res.stderr and "vs bf16 loop" in res.stderr  # the moe table's own columns


def test_bench_moe_sets_and_weight_release():
    from deepgemm_ascend.bench import moe, plan, run_bench

    (entry,) = resolve_kernels(["moe"])
    default = [c["label"] for _, c in plan([entry], BenchOptions())]
    assert len(default) == 9 and default[0] == "contiguous fp8 G32 4096 rows 4096x7168"
    assert [c["expected_m"] for _, c in plan([entry], BenchOptions()) if c["variant"] == "masked"] == [8, 32, 64] * 2
    assert len(plan([entry], BenchOptions(quick=True))) == 7
    rows = run_bench([entry], BenchOptions(shapes=[(40, 64, 128)], repeat=1, warmup=0, min_time=0))
    assert [r["status"] for r in rows] == ["ok"] * 5
    assert not moe._CACHE  # the shared expert weights are freed after their last case


def test_bench_json_file_fp32(tmp_path):
    out = tmp_path / "res.json"
    res = run_module("bench", "--shapes", "33,65,129", "--out-dtype", "fp32", "--repeat", "1", "--warmup", "0",
                     "--no-progress", "--json", str(out), cwd=tmp_path, OMP_WAIT_POLICY="ACTIVE")
    assert res.returncode == 0, res.stderr
    assert "ours ms" in res.stdout and "fp32" in res.stdout  # table on stdout when JSON goes to a file
    doc = json.loads(out.read_text())
    assert doc["machine"]["omp_wait_policy"] == "ACTIVE"  # a policy set by the user is kept
    (row,) = doc["results"]
    assert row["out_dtype"] == "fp32" and row["status"] == "ok"
    assert row["bytes"] == 2 * (33 * 129 + 65 * 129) + 4 * 33 * 65


def test_bench_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "bench.png"
    res = run_module("bench", "--shapes", "64,64,64", "--repeat", "1", "--warmup", "0", "--plot", str(png),
                     cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_plot_without_matplotlib(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from deepgemm_ascend.cli import main\n"
            "sys.exit(main(['bench', '--shapes', '8,8,8', '--plot', 'x.png']))")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert "pip install matplotlib" in res.stderr
    assert not (tmp_path / "x.png").exists()


def test_unknown_kernel(tmp_path):
    res = run_module("bench", "--kernels", "bf16,nope", "--shapes", "8,8,8", cwd=tmp_path)
    assert res.returncode != 0
    assert "unknown kernel(s): nope" in res.stderr and "available: bf16" in res.stderr


@pytest.mark.parametrize("args, message", [
    (["--shapes", "1,2"], "bad shape"),
    (["--shapes", "1,2,-3"], "bad shape"),
    (["--layouts", "nt,xy", "--shapes", "8,8,8"], "unknown layout(s) xy"),
    (["--repeat", "0"], "must be >= 1"),
    (["--quick", "--shapes", "8,8,8"], "not allowed with"),
    (["--kernels", "fp8", "--recipes", "block,nope"], "unknown recipe(s) nope"),
])
def test_bad_arguments(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_resolve_kernels_lists_available():
    assert [k.name for k in resolve_kernels(["bf16"])] == ["bf16"]
    assert [k.name for k in resolve_kernels(["fp8", "bf16"])] == ["fp8", "bf16"]
    with pytest.raises(ValueError, match="available: bf16, fp8"):
        resolve_kernels(["nope"])


def test_failed_case_gives_nonzero_exit(monkeypatch, capsys):
    """A registered kernel whose case fails the accuracy check (or raises) makes the run exit with 1."""

    def cases(options: BenchOptions):
        return [{"label": "bad 1x1x1", "layout": "nt", "m": 1, "n": 1, "k": 1},
                {"label": "boom 1x1x1", "layout": "nt", "m": 1, "n": 1, "k": 1}]

    def run(case, options, status):
        if case["label"].startswith("boom"):
            raise RuntimeError("kernel exploded")
        status("timing")
        return {"kernel": "fake", "label": case["label"], "layout": "nt", "m": 1, "n": 1, "k": 1,
                "out_dtype": "bf16", "ours_ms": 1.0, "ours_tflops": 0.0, "ours_gbps": 0.0, "torch_ms": 2.0,
                "torch_tflops": 0.0, "ratio": 2.0, "diff": float("nan"), "status": "FAIL"}

    monkeypatch.setitem(KERNELS, "fake", KernelBench("fake", "a kernel that fails", cases, run))
    code = cli.main(["bench", "--kernels", "fake", "--no-progress", "--json", "-"])
    out, err = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)
    assert [r["status"] for r in doc["results"]] == ["FAIL", "ERROR"]
    assert doc["results"][0]["diff"] is None  # NaN is written as null: the document stays valid JSON
    assert "kernel exploded" in err and "2 case(s) failed" in err
    assert "[1/2] fake bad 1x1x1" in err


def test_progress_bar_redraws_in_place():
    import io

    from deepgemm_ascend.bench.progress import Progress

    stream = io.StringIO()
    p = Progress(2, bar=True, stream=stream)
    p.start("bf16 nt 8x8x8 bf16")
    p.status("timing")
    p.finish({"status": "ok"})
    p.close()
    text = stream.getvalue()
    assert "\r[" in text and "1/2" in text and "timing" in text and "\n" in text


def test_main_module_is_cli():
    import deepgemm_ascend.__main__ as main_module

    assert main_module.main is cli.main



def test_bench_mqa_and_hc_json():
    import json
    import subprocess
    import sys

    for kernel, shapes in (("mqa", "64,256,32"), ("hc", "64,24,1024")):   # S,SKV,H and M,N,K
        out = subprocess.run([sys.executable, "-m", "deepgemm_ascend", "bench", "--kernels", kernel, "--shapes", shapes,
                              "--repeat", "1", "--warmup", "0", "--no-progress", "--json", "-"],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout)["results"]
        assert rows and all(r["kernel"] == kernel and r["status"] == "ok" for r in rows), rows


def test_model_refuses_an_unknown_family(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["model", "--family", "bf16,int4"])
    assert exc.value.code == cli.EXIT_USAGE
    assert "unknown family(ies) int4" in capsys.readouterr().err
