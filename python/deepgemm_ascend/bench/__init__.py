"""Benchmark runner behind `deepgemm-ascend bench`.

Every kernel family registers one `KernelBench` entry in `KERNELS` (a dict keyed by the name
users pass to `--kernels`). An entry knows how to enumerate its cases for the given options and
how to run one case: check it against a float64 torch reference and time it against torch in
the same process, interleaved. `run_bench` drives the entries, shows progress and collects one
result row (a plain dict) per case. A new family is a module next to `bf16.py` and one
line in `KERNELS`; an entry may declare its own table columns
(`KernelBench.columns`), and the report prints one table per kernel.
"""
import gc
import os
import platform
from typing import Dict, List, Optional, Sequence

import torch

from .. import runtime
from .base import DIFF_THRESHOLD, BenchOptions, KernelBench
from .progress import Progress
from . import bf16, fp8, hc, mega_moe, moe, mqa

# Kernel name -> benchmark entry.
KERNELS: Dict[str, KernelBench] = {
    "bf16": bf16.BENCH,
    "fp8": fp8.BENCH,
    "moe": moe.BENCH,
    "mqa": mqa.BENCH,
    "hc": hc.BENCH,
    "mega_moe": mega_moe.BENCH,
}


def available_kernels() -> List[str]:
    return sorted(KERNELS)


def resolve_kernels(names: Sequence[str]) -> List[KernelBench]:
    """Entries for `names`; ValueError naming the available kernels for an unknown one."""
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        raise ValueError(f"unknown kernel(s): {', '.join(unknown)}; available: {', '.join(available_kernels())}")
    if not names:
        raise ValueError(f"no kernel given; available: {', '.join(available_kernels())}")
    return [KERNELS[n] for n in names]


def default_device() -> str:
    """'npu' when the NPU backend is built and torch_npu sees a device, else 'cpu'."""
    if "npu" in runtime.info().get("backends", ()):
        npu = getattr(torch, "npu", None)
        if npu is not None and npu.is_available():
            return "npu"
    return "cpu"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict:
    """deepgemm_ascend.info() plus torch, Python and CPU model details."""
    from .. import _C

    out = dict(runtime.info())
    out.setdefault("version", _C.__version__)
    out.update(
        torch=torch.__version__,
        torch_threads=torch.get_num_threads(),
        python=platform.python_version(),
        platform=platform.platform(),
        cpu_model=_cpu_model(),
        logical_cpus=os.cpu_count(),
    )
    return out


def cpu_busy_fraction(interval: float = 0.3) -> Optional[float]:
    """Fraction of all CPUs busy during `interval` seconds (Linux /proc/stat), None where unavailable.

    Called before a run, while this process is idle, it tells whether other processes would
    distort the timings (torch's OpenMP threads in particular suffer badly from oversubscription).
    """
    import time

    def sample():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields), idle

    try:
        total0, idle0 = sample()
        time.sleep(interval)
        total1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    if total1 <= total0:
        return None
    return max(0.0, min(1.0, 1.0 - (idle1 - idle0) / (total1 - total0)))


def geomean_ratio(rows: Sequence[dict]) -> Optional[float]:
    """Geometric mean of torch_time / ours_time over rows that have a positive ratio."""
    import math

    ratios = [r["ratio"] for r in rows if isinstance(r.get("ratio"), (int, float)) and r["ratio"] > 0]
    if not ratios:
        return None
    return math.exp(sum(math.log(x) for x in ratios) / len(ratios))


def _error_row(entry: KernelBench, case: dict, exc: BaseException) -> dict:
    row = {k: v for k, v in case.items() if k != "label"}
    row.update(kernel=entry.name, label=case["label"], status="ERROR", error=f"{type(exc).__name__}: {exc}")
    return row


def plan(kernels: Sequence[KernelBench], options: BenchOptions) -> List[tuple]:
    """(entry, case) pairs in run order; raises ValueError for options a kernel rejects."""
    return [(entry, case) for entry in kernels for case in entry.cases(options)]


def run_bench(kernels: Sequence[KernelBench], options: BenchOptions, progress: str = "off", stream=None,
              peak_tflops: Optional[float] = None) -> List[dict]:
    """Runs every case of every entry; returns the result rows in order.

    progress: "bar" (redrawn line), "lines" (one line per finished case), "auto" (bar when
    `stream` is a terminal, else lines) or "off"; written to `stream` (default stderr).
    torch uses as many threads as deepgemm_ascend uses AI cores, so both sides get the same
    cores; the previous torch thread count is restored afterwards. A case that raises becomes a
    row with status ERROR instead of aborting the run. With `peak_tflops` (the machine's measured
    peak, runtime.measure_host_peak), each row with TFLOPS gets `peak_frac`, its fraction of it.
    """
    cases = plan(kernels, options)
    bar = {"bar": True, "lines": False, "auto": None, "off": False}[progress]
    meter = Progress(len(cases), bar=bar, stream=stream, enabled=progress != "off")
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, runtime.get_num_ai_cores()))
    rows = []
    try:
        for entry, case in cases:
            meter.start(f"{entry.name} {case['label']}")
            try:
                row = entry.run(case, options, meter.status)
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # keep going: one broken case must not hide the others
                row = _error_row(entry, case, exc)
            rows.append(row)
            gc.collect()  # free the operands of large shapes before the next case
            meter.finish(row)
    finally:
        torch.set_num_threads(old_threads)
        meter.close()
    if peak_tflops:
        set_peak_fractions(rows, peak_tflops)
    return rows


def set_peak_fractions(rows: List[dict], peak_tflops: float) -> None:
    """Gives each row with TFLOPS `peak_frac`, its fraction of `peak_tflops` (runtime.measure_host_peak)."""
    for row in rows:
        if isinstance(row.get("ours_tflops"), (int, float)):
            row["peak_frac"] = row["ours_tflops"] / peak_tflops


__all__ = ["BenchOptions", "KernelBench", "KERNELS", "DIFF_THRESHOLD", "available_kernels", "resolve_kernels",
           "default_device", "machine_info", "cpu_busy_fraction", "geomean_ratio", "plan", "run_bench", "set_peak_fractions",
           "Progress"]
