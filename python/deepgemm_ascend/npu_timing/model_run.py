"""`deepgemm-ascend model`: our NPU kernels on the timing model, one timing-only call per family and shape.

Each call runs in a process of its own (worker.py) on the npu-model backend through the public API, so the
kernels take their real tile configs and launch parameters; its launches' reports are summed into the
call's predicted time. The times are predictions of our timing model, not measurements.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Sequence, Tuple

from .bounds import Work, bound
from .families import FAMILIES, PUBLISHED, Shape
from .report import read_reports, summarise

HEADER = ("Predicted by our timing model of the Ascend 950 (the NPU instruction model's timing mode, timing-only "
          "runs of our kernels with their real tile configs and launches), not measured on hardware. The model's "
          "constants are the 950PR's from the devkit documentation (arch/ascend950.hpp, kTiming).")
PUBLISHED_NOTE = ("published: DeepGEMM-Ascend's own measurements on an Ascend 950DT (CANN 9.20, cold L2); their "
                  "FP8 x FP8 figure names no scale recipe and stands beside both FP8 x FP8 rows.")
ERROR_LINES = 6  # stderr lines kept when a worker process dies without a result


def _shape_text(shape: Shape) -> str:
    return "x".join(str(x) for x in shape)


def _worker_result(proc: subprocess.CompletedProcess) -> dict:
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                break
    tail = "\n".join(proc.stderr.strip().splitlines()[-ERROR_LINES:])
    return {"status": "failed", "error": f"the process ended with code {proc.returncode} and no result: {tail}"}


def run_case(family: str, shape: Shape, trace: Optional[str] = None) -> dict:
    """One family's call at `shape` on the timing model: a result row (the launches' full reports under
    "reports")."""
    fd, path = tempfile.mkstemp(prefix=f"dga_model_{family}_", suffix=".jsonl")
    os.close(fd)
    start = time.perf_counter()
    try:
        cmd = [sys.executable, "-m", "deepgemm_ascend.npu_timing.worker", family, ",".join(map(str, shape)), path]
        proc = subprocess.run(cmd + ([trace] if trace else []), capture_output=True, text=True)
        result = _worker_result(proc)
        try:
            reports = read_reports(path)
        except ValueError as exc:  # a report cut short by a process that died while writing it
            reports, result = [], {"status": "failed", "error": f"{result.get('error') or ''} {exc}".strip()}
    finally:
        os.unlink(path)
    row = {"family": family, "shape": list(shape), "description": FAMILIES[family].description,
           "status": result["status"], "error": result.get("error"), "inputs_s": result.get("build_s"),
           "model_s": result.get("run_s"), "wall_s": time.perf_counter() - start, "flops": result.get("flops", 0),
           "launches": [summarise(r) for r in reports], "reports": reports}
    if result["status"] == "ok" and not reports:
        row.update(status="failed", error="the call made no launch on the model")
    row["predicted_us"] = sum(r["time_us"] for r in reports) if reports else None
    us = row["predicted_us"]
    row["tflops"] = row["flops"] / us / 1e6 if us and row["flops"] else None
    # The family's communication launches, apart: the rest is the time measured against the bound.
    comm = FAMILIES[family].communication
    row["communication_us"] = sum(r["time_us"] for r in reports if r.get("kernel") in comm) if comm else None
    measured = us - row["communication_us"] if us and comm else us
    # The bound of the call's work (bounds.py) and the fraction of it the prediction reaches.
    row["bound"] = bound(Work(**result["work"])) if result.get("work") else None
    row["of_bound"] = row["bound"]["bound_us"] / measured if measured and row["bound"] else None
    longest = max(row["launches"], key=lambda s: s["time_us"], default=None)
    row["critical"] = longest["critical"] if longest else None
    pub = PUBLISHED.get((family, tuple(shape)))
    row["published"] = {"us": pub[0], "tflops": pub[1], "device": "Ascend 950DT, CANN 9.20, cold L2"} if pub else None
    return row


def run_model(families: Sequence[str], shapes: Optional[Sequence[Shape]], trace: Optional[str] = None,
              progress=None) -> List[dict]:
    """Rows of every family at its default shape, or at each of `shapes` (those of its number of dimensions)."""
    cases = [(f, tuple(s)) for f in families
             for s in ([FAMILIES[f].default] if not shapes else [s for s in shapes if len(s) == FAMILIES[f].dims])]
    return run_cases(cases, trace, progress)


def run_cases(cases: Sequence[Tuple[str, Shape]], trace: Optional[str] = None, progress=None) -> List[dict]:
    rows = []
    for family, shape in cases:
        if progress:
            progress(f"{family} {_shape_text(shape)} ...")
        rows.append(run_case(family, shape, trace))
    return rows


def _shape_label(row: dict) -> str:
    meaning = FAMILIES[row["family"]].shape_meaning
    text = _shape_text(row["shape"])
    return f"{text} ({meaning})" if meaning != "M,N,K" else text


def format_rows(rows: Sequence[dict]) -> str:
    width = max([len("shape")] + [len(_shape_label(r)) for r in rows])
    lines = [HEADER, "",
             f"{'family':<13} {'shape':<{width}} {'predicted us':>12} {'TFLOPS':>7} {'bound us':>9} {'by':<6} "
             f"{'of bound':>8} {'launches':>8} {'critical':<8} {'published':<24} {'inputs s':>8} {'model s':>8}"]
    for r in rows:
        pub = r["published"]
        pub_text = f"{pub['us']:.1f} us = {pub['tflops']:.0f} TFLOPS" if pub else "-"
        us = f"{r['predicted_us']:.1f}" if r["predicted_us"] is not None else "-"
        tf = f"{r['tflops']:.1f}" if r["tflops"] else "-"
        secs = [f"{r[k]:.1f}" if r.get(k) is not None else "-" for k in ("inputs_s", "model_s")]
        b = r.get("bound")
        bound_text = f"{b['bound_us']:>9.1f} {b['bound_by']:<6}" if b else f"{'-':>9} {'-':<6}"
        frac = f"{r['of_bound']:.1%}" if r.get("of_bound") else "-"
        lines.append(f"{r['family']:<13} {_shape_label(r):<{width}} {us:>12} {tf:>7} {bound_text} {frac:>8} "
                     f"{len(r['launches']):>8} {r['critical'] or '-':<8} {pub_text:<24} {secs[0]:>8} {secs[1]:>8}")
        if len(r["launches"]) > 1:
            lines += [f"    {s['kernel']}: {s['time_us']:.1f} us, critical {s['critical']}" for s in r["launches"]]
        if r.get("communication_us") is not None:
            lines.append(f"    communication: {r['communication_us']:.1f} us of the {us} us ("
                         f"{', '.join(FAMILIES[r['family']].communication)}), not in 'of bound'")
        if r["status"] != "ok":
            lines.append(f"    FAILED: {r['error']}")
    if any(r["published"] for r in rows):
        lines += ["", PUBLISHED_NOTE]
    return "\n".join(lines)


def json_rows(rows: Sequence[dict]) -> List[dict]:
    """The rows without the launches' full reports (their summaries stay)."""
    return [{k: v for k, v in r.items() if k != "reports"} for r in rows]


def plot_launch(rows: Sequence[dict]):
    """(row, report) of the first family's longest launch, None when no family made a launch."""
    for r in rows:
        if r["reports"]:
            return r, max(r["reports"], key=lambda rep: rep["time_us"])
    return None
