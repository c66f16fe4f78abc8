"""The model's timing reports (deepgemm_ascend.npu_timing) and `deepgemm-ascend model`, on a small BF16 GEMM run
on the npu-model backend with the timing mode on. The `bench`-marked test at the end runs every family of the
model command at its production shape (`pytest -m bench`; minutes to tens of minutes)."""
import json
import os
import subprocess
import sys

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import npu_timing, runtime
from deepgemm_ascend.npu_timing import report as rep

pytestmark = pytest.mark.skipif("npu-model" not in dg.info()["backends"],
                                reason="built without the AscendC devkit (no libdga_npu_model)")
M, N, K = 256, 512, 384


def _gemm(timing_only: bool, operands=None):
    """A small BF16 GEMM on the model with the timing mode on: (its reports, a, b, d). `operands`: the (a, b, d)
    of an earlier call (the prediction depends on the operands' addresses)."""
    if operands is None:
        gen = torch.Generator().manual_seed(0)
        a, b = torch.randn(M, K, generator=gen).bfloat16(), torch.randn(N, K, generator=gen).bfloat16()
        d = torch.full((M, N), float("nan")).bfloat16()
    else:
        a, b, d = operands
    before = runtime.get_backend()
    runtime.set_backend("npu-model")
    try:
        with npu_timing.capture(timing_only=timing_only) as cap:
            dg.bf16_gemm_nt(a, b, d)
    finally:
        runtime.set_backend(before)
    return cap.launches, a, b, d


@pytest.fixture(scope="module")
def functional():
    return _gemm(False)


@pytest.fixture(scope="module")
def report_file(functional, tmp_path_factory):
    path = tmp_path_factory.mktemp("timing") / "report.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in functional[0]))
    return path


def run_module(module, *args, cwd, timeout=600):
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def test_capture_restores_the_environment_and_reads_one_launch(functional):
    launches = functional[0]
    assert len(launches) == 1
    assert "DGA_NPU_MODEL_TIMING" not in os.environ and "DGA_NPU_MODEL_TIMING_ONLY" not in os.environ
    (r,) = launches
    assert r["timing_only"] is False and r["time_us"] > r["launch_us"] > 0
    assert r["trace"] and all(t["events"] for t in r["trace"])


def test_summary_and_text_report_agree_with_the_json(functional):
    (r,) = functional[0]
    s = npu_timing.summarise(r)
    slow = max(r["cores"], key=lambda c: c["end_us"])
    assert s["slowest_core"] == slow["name"] and s["critical"] == slow["critical"]
    assert s["critical"] in slow["pipes"] and sum(s["critical_counts"].values()) == len(r["cores"])
    stats = npu_timing.pipe_stats(r)
    assert stats and all(0 <= v["busy_min"] <= v["busy_mean"] <= v["busy_max"] <= 1 for v in stats.values())
    busiest = max(c["pipes"]["M"]["busy"] for c in r["cores"])
    assert stats["AIC", "M"]["busy_max"] == busiest
    text = npu_timing.format_report(r, 0)
    traced = r["trace"][0]["name"]
    core = next(c for c in r["cores"] if c["name"] == traced)
    assert text.startswith(f"launch 0: {r['kernel']}, {r['blocks']} blocks on {len(r['cores'])} cores")
    assert f"predicted time {r['time_us']:.3f} us" in text
    assert f"traced cores: {traced}" in text and f"critical pipe {core['critical']}" in text
    m = core["pipes"]["M"]
    assert (f"    M        {m['busy']:>6.1%} {m['busy_us']:>10.3f} {m['flag_wait_us']:>13.3f} "
            f"{m['memory_wait_us']:>15.3f} {m['instructions']:>12}") in text
    assert f"over the {len(r['cores'])} AIC core(s)" in text
    assert f"HBM read {rep._bytes(r['memory']['hbm_read_bytes'])}" in text


def test_core_kinds_and_malformed_lines():
    assert [rep.core_kind(n) for n in ("core 3", "AIV core 2", "group 1 AIC", "group 1 AIV0")] == \
        ["AIC", "AIV", "AIC", "AIV"]
    assert rep.critical_pipe({"critical": "S", "pipes": {}}) == "idle"  # a core that ran nothing
    assert rep.critical_pipe({"critical": "M", "pipes": {"M": {}}}) == "M"
    with pytest.raises(ValueError, match=r"^f:2: not a JSON timing report"):
        rep.parse_lines(['{"time_us": 1, "cores": []}', "{oops"], "f")
    with pytest.raises(ValueError, match=r"^f:1: not a timing report"):
        rep.parse_lines(['{"kernel": "x"}'], "f")


def test_functional_run_matches_torch_and_timing_only_predicts_the_same_time(functional):
    (full,), a, b, d = functional
    ref = a.double() @ b.double().T
    assert (d.double() - ref).abs().max() <= 2.0 ** -7 * ref.abs().max()
    (only,), *_ = _gemm(True, (a, b, d))  # the same operands: the same addresses, the same prediction
    assert only["timing_only"] is True and only["kernel"] == full["kernel"]
    assert only["time_us"] == full["time_us"]
    assert only["memory"] == full["memory"]


def test_report_module_prints_a_launch_and_checks_its_arguments(report_file, tmp_path):
    res = run_module("deepgemm_ascend.npu_timing", str(report_file), "--launch", "-1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("launch 0: ") and "busy fraction of each pipe over the cores" in res.stdout
    res = run_module("deepgemm_ascend.npu_timing", str(report_file), "--launch", "1", cwd=tmp_path)
    assert res.returncode == 2 and "holds 1 launch(es)" in res.stderr


def test_model_command_on_a_small_shape(tmp_path):
    out = tmp_path / "model.json"
    res = run_module("deepgemm_ascend", "model", "--family", "bf16", "--shapes", f"{M},{N},{K}", "--json", str(out),
                     "--report", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "not measured on hardware" in res.stdout
    (row,) = json.loads(out.read_text())["rows"]
    assert row["status"] == "ok" and row["shape"] == [M, N, K] and row["launches"]
    assert all(s["timing_only"] for s in row["launches"])
    assert row["predicted_us"] == pytest.approx(sum(s["time_us"] for s in row["launches"]))
    assert row["tflops"] == pytest.approx(2 * M * N * K / row["predicted_us"] / 1e6)
    b = row["bound"]  # BF16: A and B read once, D written once at the 950's HBM bandwidth; the cube at its peak
    r = runtime_rates()
    hz = r["clock_ghz"] * 1e9
    assert b["hbm_us"] == pytest.approx(2 * (M * K + N * K + M * N) / (r["hbm_bytes_per_cycle"] * hz) * 1e6)
    assert b["cube_us"] == pytest.approx(2 * M * N * K / (8192 * r["cube_cores"] * hz) * 1e6)
    assert b["bound_us"] == max(b["cube_us"], b["hbm_us"]) and b["vector_us"] == 0
    assert row["of_bound"] == pytest.approx(b["bound_us"] / row["predicted_us"])
    line = next(x for x in res.stdout.splitlines() if x.startswith("bf16 "))
    assert line.split()[:8] == ["bf16", f"{M}x{N}x{K}", f"{row['predicted_us']:.1f}", f"{row['tflops']:.1f}",
                                f"{b['bound_us']:.1f}", b["bound_by"], f"{row['of_bound']:.1%}",
                                str(len(row["launches"]))]
    assert f"bf16 {M}x{N}x{K}, launch 0: " in res.stdout  # --report


def runtime_rates():
    from deepgemm_ascend.npu_timing.bounds import rates

    return rates()


def test_bound_is_the_largest_of_cube_vector_and_hbm_time():
    from deepgemm_ascend.npu_timing.bounds import Work, bound

    r = {"clock_ghz": 1.0, "cube_cores": 2, "vector_cores": 4, "cube_flops_per_cycle": {"fp8": 100.0},
         "vector_bytes_per_cycle": 10.0, "hbm_bytes_per_cycle": 50.0}
    b = bound(Work(flops=4e5, cube="fp8", hbm_bytes=1e5, vector_bytes=1.2e5), r)
    assert (b["cube_us"], b["hbm_us"], b["vector_us"]) == pytest.approx((2.0, 2.0, 3.0))
    assert b["bound_us"] == pytest.approx(3.0) and b["bound_by"] == "vector"
    with pytest.raises(ValueError, match="cube: expected one of"):
        Work(flops=1.0, cube="int4", hbm_bytes=1.0)


def test_every_target_names_a_family_and_a_shape_of_its_length():
    from deepgemm_ascend.npu_timing.families import FAMILIES
    from deepgemm_ascend.npu_timing.targets import TARGETS, format_verdicts, verdict

    assert TARGETS and all(len(t.shape) == FAMILIES[t.family].dims and 0 < t.goal < 1 for t in TARGETS)
    assert verdict({"of_bound": 0.9}, 0.9)["met"] and not verdict({"of_bound": 0.89}, 0.9)["met"]
    assert not verdict({"of_bound": None}, 0.5)["met"]
    rows = [{"family": "bf16", "shape": [1, 2, 3], "target": verdict({"of_bound": 0.5}, 0.97)},
            {"family": "hc", "shape": [4, 5, 6], "target": verdict({"of_bound": 0.75}, 0.7)}]
    assert format_verdicts(rows).splitlines() == [
        "NOT MET bf16          1x2x3                          50.0% of its bound (goal 97%)",
        "met     hc            4x5x6                          75.0% of its bound (goal 70%)",
        "targets met: 1 of 2 (predictions of our timing model, not measurements)"]


def test_model_targets_of_a_family_and_four_number_shapes(tmp_path):
    out = tmp_path / "model.json"
    res = run_module("deepgemm_ascend", "model", "--family", "grouped-bf16", "--shapes", "2,128,256,512;64,64,64",
                     "--json", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (row,) = json.loads(out.read_text())["rows"]  # the three-number shape is not a grouped-bf16 shape
    assert row["shape"] == [2, 128, 256, 512] and row["status"] == "ok" and 0 < row["of_bound"] < 1
    assert row["flops"] == 2 * 2 * 128 * 256 * 512


def test_model_command_reports_a_failed_call_with_its_message(tmp_path):
    res = run_module("deepgemm_ascend", "model", "--family", "mega-moe", "--shapes", "8,100,128", cwd=tmp_path)
    assert res.returncode == 1
    assert "FAILED: ValueError: hidden: must be a positive multiple of 128, got 100" in res.stdout
    assert "1 call(s) failed: mega-moe" in res.stderr


def test_timeline_plot(functional, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "timeline.png"
    npu_timing.plot_timeline(functional[0][0], str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="no traced instructions"):
        npu_timing.plot_timeline(dict(functional[0][0], trace=[]), str(png))


def test_timeline_joins_only_bars_closer_than_the_gap():
    from deepgemm_ascend.npu_timing.plot import _merged

    events = [(5.0, 1.0, "b"), (0.0, 1.0, "a"), (1.05, 1.0, "a"), (2.1, 0.5, "c"), (3.0, 0.2, "c")]
    assert _merged(events, 0.1) == [(0.0, 2.6, None), (3.0, 0.2, "c"), (5.0, 1.0, "b")]
    assert _merged(events, 0.0) == sorted(events)


def test_timeline_plot_without_matplotlib(report_file, tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from deepgemm_ascend.npu_timing.__main__ import main\n"
            f"sys.exit(main([{str(report_file)!r}, '--plot', 'x.png']))")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "pip install matplotlib" in res.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.bench
def test_model_families_at_production_shapes():
    from deepgemm_ascend.npu_timing import model_run
    from deepgemm_ascend.npu_timing.families import FAMILIES

    rows = model_run.run_model(list(FAMILIES), None, progress=lambda t: print(t, flush=True))
    print("\n" + model_run.format_rows(rows))
    for r in rows:
        print(f"{r['family']}: {r['wall_s']:.1f} s wall ({r['status']})")


def test_mega_moe_reports_its_communication_apart_from_the_fraction_of_its_bound(tmp_path):
    from deepgemm_ascend.npu_timing.families import MEGA_COMMUNICATION

    out = tmp_path / "model.json"
    res = run_module("deepgemm_ascend", "model", "--family", "mega-moe", "--shapes", "128,2048,1024", "--json",
                     str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (row,) = json.loads(out.read_text())["rows"]
    kernels = [s["kernel"] for s in row["launches"]]
    assert set(MEGA_COMMUNICATION) <= set(kernels) and "dga_mega_moe_combine" in kernels
    comm = sum(s["time_us"] for s in row["launches"] if s["kernel"] in MEGA_COMMUNICATION)
    assert 0 < comm < row["predicted_us"] and row["communication_us"] == pytest.approx(comm)
    assert row["of_bound"] == pytest.approx(row["bound"]["bound_us"] / (row["predicted_us"] - comm))
    assert f"communication: {comm:.1f} us of the {row['predicted_us']:.1f} us" in res.stdout
