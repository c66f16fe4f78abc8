"""Reports of benchmark rows: a text table, a JSON document and a TFLOPS bar chart."""
import datetime
import json
from typing import List, Optional, Sequence

from .. import _plotting
from . import KERNELS, geomean_ratio

# (header, row key, format) of the table columns, in order.
COLUMNS = [
    ("kernel", "kernel", "{}"),
    ("layout", "layout", "{}"),
    ("M", "m", "{}"),
    ("N", "n", "{}"),
    ("K", "k", "{}"),
    ("out", "out_dtype", "{}"),
    ("ours ms", "ours_ms", "{:.3f}"),
    ("ours TFLOPS", "ours_tflops", "{:.3f}"),
    ("of peak", "peak_frac", "{:.0%}"),
    ("ours GB/s", "ours_gbps", "{:.2f}"),
    ("torch ms", "torch_ms", "{:.3f}"),
    ("torch TFLOPS", "torch_tflops", "{:.3f}"),
    ("ratio", "ratio", "{:.3f}"),
    ("vs alone", "vs_alone", "{:.2f}"),
    ("diff", "diff", "{:.2e}"),
    ("status", "status", "{}"),
]
_LEFT = {"kernel", "recipe", "layout", "out", "status", "case", "dtype"}
_RATIO_DESC = "torch time / ours time"  # what "ratio" means for kernels that do not say otherwise



def _cell(row: dict, key: str, fmt: str) -> str:
    value = row.get(key)
    if value is None or value == "":
        return "-"
    try:
        return fmt.format(value)
    except (TypeError, ValueError):
        return str(value)


def geomean_line(rows: Sequence[dict], desc: str = _RATIO_DESC) -> str:
    g = geomean_ratio(rows)
    n = sum(1 for r in rows if isinstance(r.get("ratio"), (int, float)) and r["ratio"] > 0)
    if g is None:
        return f"geometric-mean ratio ({desc}): n/a"
    return f"geometric-mean ratio ({desc}) over {n} case(s): {g:.3f}  (> 1: ours is faster)"


def _rows_by_kernel(rows: Sequence[dict]) -> dict:
    """{kernel name: its rows}, kernels in order of first appearance."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r.get("kernel"), []).append(r)
    return groups


def kernel_groups(rows: Sequence[dict]) -> List[tuple]:
    """[(columns, ratio description, rows)] per kernel, in order of first appearance.

    Kernels compare against different baselines, so each gets its own table and geometric mean;
    a kernel that does not declare columns uses COLUMNS.
    """
    out = []
    for name, members in _rows_by_kernel(rows).items():
        entry = KERNELS.get(name)
        out.append((getattr(entry, "columns", None) or COLUMNS, getattr(entry, "ratio_desc", _RATIO_DESC), members))
    return out or [(COLUMNS, _RATIO_DESC, [])]


def format_table(rows: Sequence[dict]) -> str:
    """Fixed-width tables (one per kernel), each followed by error details and its geometric-mean ratio."""
    return "\n\n".join(_format_group(*g) for g in kernel_groups(rows))


def _format_group(columns, desc: str, rows: Sequence[dict]) -> str:
    header = [h for h, _, _ in columns]
    body = [[_cell(r, key, fmt) for _, key, fmt in columns] for r in rows]
    widths = [max([len(h)] + [len(line[i]) for line in body]) for i, h in enumerate(header)]

    def render(cells):
        return "  ".join(c.ljust(w) if h in _LEFT else c.rjust(w) for c, w, h in zip(cells, widths, header)).rstrip()

    lines = [render(header), render(["-" * w for w in widths])] + [render(line) for line in body]
    for r in rows:
        if r.get("status") == "ERROR":
            lines.append(f"ERROR in {r.get('kernel')} {r.get('label')}: {r.get('error')}")
    lines.append(geomean_line(rows, desc))
    return "\n".join(lines)


def format_markdown(rows: Sequence[dict]) -> str:
    """The same tables as GitHub markdown (for docs/PERFORMANCE.md)."""
    tables = []
    for columns, _, members in kernel_groups(rows):
        header = [h for h, _, _ in columns]
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---" if h in _LEFT else "---:" for h in header) + "|"]
        lines += ["| " + " | ".join(_cell(r, key, fmt) for _, key, fmt in columns) + " |" for r in members]
        tables.append("\n".join(lines))
    return "\n\n".join(tables)


def json_document(rows: Sequence[dict], machine: dict, argv: List[str], options: Optional[dict] = None) -> dict:
    """The --json document: machine info, command line, options, results and the geometric-mean ratio."""
    import shlex

    return {
        "schema": 1,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "command": shlex.join(argv),
        "argv": list(argv),
        "options": options or {},
        "results": list(rows),
        "geomean_ratio": geomean_ratio(rows),
        "geomean_ratio_by_kernel": {name: geomean_ratio(members)
                                    for name, members in _rows_by_kernel(rows).items()},
    }



def dumps(doc: dict) -> str:
    """JSON text; NaN/inf (e.g. a diff of a broken kernel) become null so the output stays valid JSON."""

    def clean(x):
        if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(doc), indent=2)


def require_matplotlib():
    """matplotlib with the Agg backend for --plot (RuntimeError with an install hint when it is missing)."""
    return _plotting.require_matplotlib("--plot")


def plot_tflops(rows: Sequence[dict], path: str, title: str = "deepgemm-ascend vs torch") -> None:
    """Grouped bar chart of TFLOPS, ours vs torch, one group per case; saved to `path` (PNG)."""
    require_matplotlib()
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r.get("status") != "ERROR"]
    labels = [f"{r.get('kernel')} {r.get('label')}" for r in rows]
    ours = [r.get("ours_tflops") or 0.0 for r in rows]
    theirs = [r.get("torch_tflops") or 0.0 for r in rows]
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(rows) + 2), 4.5))
    w = 0.4
    ax.bar([x - w / 2 for x in xs], ours, w, label="deepgemm-ascend")
    ax.bar([x + w / 2 for x in xs], theirs, w, label="torch.matmul")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("TFLOPS")
    g = geomean_ratio(rows)
    ax.set_title(title + (f" (geomean torch/ours time {g:.2f})" if g else ""))
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
