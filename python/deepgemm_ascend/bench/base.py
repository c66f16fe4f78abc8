"""Types shared by the benchmark runner and the per-kernel benchmark modules."""
import dataclasses
import math
import statistics
from typing import Callable, List, Optional, Sequence, Tuple

# calc_diff above this marks a case FAIL.
DIFF_THRESHOLD = 1e-5


@dataclasses.dataclass
class BenchOptions:
    """What to run and how to time it (kernels interpret the fields that apply to them)."""

    shapes: Optional[List[Tuple[int, int, int]]] = None  # None: the kernel's default set
    quick: bool = False  # use the kernel's quick set when `shapes` is None
    layouts: Sequence[str] = ("nt",)
    out_dtype: str = "bf16"  # "bf16" or "fp32"
    repeat: int = 5  # minimum number of timed calls per implementation
    warmup: int = 1  # untimed calls per implementation before timing
    min_time: float = 0.2  # keep timing small problems until this many seconds were spent
    device: str = "cpu"
    seed: int = 0
    recipes: Sequence[str] = ("block",)  # scale-factor recipes of the fp8 family (see bench.fp8.RECIPES)
    ranks: int = 8  # ranks (processes) of the collective kernels (mega_moe)


@dataclasses.dataclass
class KernelBench:
    """One registered kernel family.

    cases(options) -> list of dicts, each with a human-readable "label".
    run(case, options, status) -> result row (dict); `status(text)` reports the current phase.
    """

    name: str
    description: str
    cases: Callable[[BenchOptions], List[dict]]
    run: Callable[[dict, BenchOptions, Callable[[str], None]], dict]
    # Table columns (header, row key, format) of this kernel's rows; None: the runner's default
    # columns (bench.report.COLUMNS). The JSON always holds every key of the rows.
    columns: Optional[Sequence[Tuple[str, str, str]]] = None
    # What the "ratio" key of this kernel's rows divides (named in the geometric-mean line).
    ratio_desc: str = "torch time / ours time"


def perf_fields(prefix: str, samples: Sequence[float], flops: float, nbytes: float) -> dict:
    """Median time of `samples` (seconds) as {prefix}_ms, TFLOPS and GB/s, plus the run count and best time."""
    med = statistics.median(samples)
    return {
        f"{prefix}_ms": med * 1e3,
        f"{prefix}_min_ms": min(samples) * 1e3,
        f"{prefix}_runs": len(samples),
        f"{prefix}_tflops": flops / med / 1e12 if med > 0 else 0.0,
        f"{prefix}_gbps": nbytes / med / 1e9 if med > 0 else 0.0,
    }


def ours_vs_torch(ours_s: Sequence[float], torch_s: Sequence[float], flops: float, nbytes: float,
                  torch_bytes: Optional[float] = None) -> dict:
    """perf_fields of ours and of torch plus "ratio" = torch time / ours time (> 1: ours is faster)."""
    row = perf_fields("ours", ours_s, flops, nbytes)
    row.update(perf_fields("torch", torch_s, flops, nbytes if torch_bytes is None else torch_bytes))
    row["ratio"] = row["torch_ms"] / row["ours_ms"] if row["ours_ms"] > 0 else None
    return row


def accuracy_status(diff: Optional[float], threshold: float = DIFF_THRESHOLD) -> str:
    """'ok' when calc_diff is finite and within `threshold`, else 'FAIL' (NaN fails too)."""
    if diff is None or not math.isfinite(diff) or diff > threshold:
        return "FAIL"
    return "ok"
