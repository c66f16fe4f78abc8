"""Reading the model's timing reports and the text report of one launch.

A report (one JSON line per launch, written by the model's timing mode) holds the predicted time, per core
each pipe's busy fraction, busy time, flag and memory waits and instruction count, the critical (busiest)
pipe of each core, the memory system's bytes and the instructions of the traced cores. The text report
shows the traced cores in full, the slowest core, and per kind of core (AIC, AIV) the spread of each
pipe's busy fraction over the cores.
"""
import json
import statistics
from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

# Pipes in the order data flows through a core: loads, the cube, write-back, the vector unit, the scalar unit.
PIPE_ORDER = ("MTE2", "MTE1", "M", "FIX", "AIC FIX", "V", "V2", "MTE3", "MTE4", "MTE5", "S", "ALL")


def parse_lines(lines: Iterable[str], source: str = "<reports>") -> List[dict]:
    """The reports of JSON lines (blank lines skipped); ValueError naming the line of a malformed one."""
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}:{i}: not a JSON timing report: {exc}") from None
        if not isinstance(doc, dict) or "time_us" not in doc or "cores" not in doc:
            raise ValueError(f"{source}:{i}: not a timing report (no 'time_us' and 'cores')")
        out.append(doc)
    return out


def read_reports(path: str) -> List[dict]:
    """Every launch's report in the file `path` (DGA_NPU_MODEL_TIMING's), in launch order."""
    with open(path) as f:
        return parse_lines(f, path)


def core_kind(name: str) -> str:
    """'AIV' for a vector core ("AIV core 3", "group 2 AIV1"), else 'AIC' ("core 5", "group 2 AIC")."""
    return "AIV" if "AIV" in name else "AIC"


def ordered_pipes(names: Iterable[str]) -> List[str]:
    names = set(names)
    return [p for p in PIPE_ORDER if p in names] + sorted(names - set(PIPE_ORDER))


def slowest_core(report: dict) -> Optional[dict]:
    return max(report["cores"], key=lambda c: c["end_us"], default=None)


def pipe_stats(report: dict) -> Dict[Tuple[str, str], dict]:
    """Per (kind of core, pipe): the cores of that kind, how many used the pipe, min / mean / max of its busy
    fraction over all cores of the kind (0 where unused), and the mean flag and memory waits (us)."""
    by_kind: Dict[str, List[dict]] = {}
    for c in report["cores"]:
        by_kind.setdefault(core_kind(c["name"]), []).append(c)
    out = {}
    for kind, cores in by_kind.items():
        for pipe in ordered_pipes(p for c in cores for p in c["pipes"]):
            stats = [c["pipes"].get(pipe) for c in cores]
            busy = [s["busy"] if s else 0.0 for s in stats]
            out[kind, pipe] = {
                "cores": len(cores), "used_by": sum(s is not None for s in stats),
                "busy_min": min(busy), "busy_mean": statistics.fmean(busy), "busy_max": max(busy),
                "flag_wait_us": statistics.fmean(s["flag_wait_us"] if s else 0.0 for s in stats),
                "memory_wait_us": statistics.fmean(s["memory_wait_us"] if s else 0.0 for s in stats),
            }
    return out


def critical_pipe(core: dict) -> str:
    """The core's critical (busiest) pipe, 'idle' for a core that ran no instruction."""
    return core["critical"] if core["critical"] in core["pipes"] else "idle"


def summarise(report: dict) -> dict:
    """The key figures of one launch: kernel, predicted time, cores, the slowest core and its critical pipe
    (the launch's critical pipe), how many cores each pipe is critical on, and the memory system's bytes."""
    slow = slowest_core(report)
    return {
        "kernel": report.get("kernel"), "time_us": report["time_us"], "blocks": report.get("blocks"),
        "cores": len(report["cores"]), "timing_only": bool(report.get("timing_only")),
        "slowest_core": slow["name"] if slow else None, "slowest_end_us": slow["end_us"] if slow else 0.0,
        "critical": critical_pipe(slow) if slow else None,
        "critical_counts": dict(Counter(critical_pipe(c) for c in report["cores"]).most_common()),
        "memory": dict(report.get("memory") or {}),
    }


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


def _core_lines(core: dict) -> List[str]:
    lines = [f"  {core['name']}: ends at {core['end_us']:.3f} us, critical pipe {critical_pipe(core)}",
             f"    {'pipe':<8} {'busy':>6} {'busy us':>10} {'flag wait us':>13} {'memory wait us':>15} "
             f"{'instructions':>12}"]
    for pipe in ordered_pipes(core["pipes"]):
        s = core["pipes"][pipe]
        lines.append(f"    {pipe:<8} {s['busy']:>6.1%} {s['busy_us']:>10.3f} {s['flag_wait_us']:>13.3f} "
                     f"{s['memory_wait_us']:>15.3f} {s['instructions']:>12}")
    return lines


def _spread_lines(report: dict) -> List[str]:
    lines = []
    stats = pipe_stats(report)
    for kind in sorted({k for k, _ in stats}):
        ends = [c["end_us"] for c in report["cores"] if core_kind(c["name"]) == kind]
        lines.append(f"  over the {len(ends)} {kind} core(s): end min / mean / max {min(ends):.3f} / "
                     f"{statistics.fmean(ends):.3f} / {max(ends):.3f} us")
        lines.append(f"    {'pipe':<8} {'used by':>7} {'busy min':>9} {'mean':>6} {'max':>6} "
                     f"{'mean flag wait us':>18} {'mean memory wait us':>20}")
        for (k, pipe), s in stats.items():
            if k == kind:
                lines.append(f"    {pipe:<8} {s['used_by']:>7} {s['busy_min']:>9.1%} {s['busy_mean']:>6.1%} "
                             f"{s['busy_max']:>6.1%} {s['flag_wait_us']:>18.3f} {s['memory_wait_us']:>20.3f}")
    return lines


def format_report(report: dict, index: Optional[int] = None) -> str:
    """The text report of one launch (index: its number in the file, shown in the title)."""
    s = summarise(report)
    title = f"launch {index}: " if index is not None else ""
    only = " (timing only: the arithmetic was skipped, the results are not computed)" if s["timing_only"] else ""
    on_cores = s["slowest_end_us"]
    lines = [
        f"{title}{s['kernel']}, {s['blocks']} blocks on {s['cores']} cores{only}",
        f"  predicted time {s['time_us']:.3f} us = {on_cores:.3f} us on the cores ({report.get('cycles', 0):.0f} "
        f"cycles at {report.get('clock_ghz', 0):.3f} GHz) + {report.get('launch_us', 0):.3f} us launch",
        f"  critical pipe {s['critical']} (of the slowest core, {s['slowest_core']}); critical on the cores: "
        + ", ".join(f"{p} x{n}" for p, n in s["critical_counts"].items()),
    ]
    m = s["memory"]
    if m:
        lines.append(f"  memory: HBM read {_bytes(m.get('hbm_read_bytes', 0))}, HBM write "
                     f"{_bytes(m.get('hbm_write_bytes', 0))} (dirty lines evicted), L2 hits {_bytes(m.get('l2_hit_bytes', 0))}, "
                     f"L2 writes {_bytes(m.get('l2_write_bytes', 0))}")
    traced = [t["name"] for t in report.get("trace", [])]
    by_name = {c["name"]: c for c in report["cores"]}
    lines.append("traced cores: " + (", ".join(traced) if traced else "none (no core matched the trace prefix)"))
    for name in traced:
        if name in by_name:
            lines += _core_lines(by_name[name])
    slow = slowest_core(report)
    if slow is not None and slow["name"] not in traced:
        lines.append("slowest core:")
        lines += _core_lines(slow)
    if len(report["cores"]) > 1:
        lines.append("busy fraction of each pipe over the cores:")
        lines += _spread_lines(report)
    return "\n".join(lines)
