"""A timeline of the traced cores' pipes: one row per pipe per core, a bar per instruction."""
from typing import Optional

from .. import _plotting
from .report import ordered_pipes

# Bars of one row closer than this share of the axis (about a third of a pixel) are drawn as one bar, so that
# rows of many thousand instructions stay drawable; the picture is the same.
MERGE_FRACTION = 1 / 5000
LABEL_MIN_FRACTION = 0.02  # an instruction's name is written on bars wider than this share of the axis
OUTLINED_BARS = 200  # rows with more bars are drawn without outlines (they would hide the colours)


def require_matplotlib():
    """matplotlib with the Agg backend for the timeline (RuntimeError with an install hint when it is missing)."""
    return _plotting.require_matplotlib("the timeline plot")


def _rows(report: dict):
    """[(label, pipe, [(start, duration, name)])] per traced core and pipe, pipes in data-flow order."""
    rows = []
    for core in report.get("trace", []):
        by_pipe = {}
        for pipe, start, end, name in core["events"]:
            by_pipe.setdefault(pipe, []).append((start, end - start, name))
        for pipe in ordered_pipes(by_pipe):
            rows.append((f"{core['name']} {pipe}", pipe, by_pipe[pipe]))
    return rows


def _merged(events, gap: float):
    """events (start, duration, name) sorted by start, neighbours closer than `gap` joined (name None when
    the joined instructions differ)."""
    out = []
    for s, d, name in sorted(events):
        if out and s <= out[-1][0] + out[-1][1] + gap:
            start, dur, prev = out[-1]
            out[-1] = (start, max(dur, s + d - start), prev if prev == name else None)
        else:
            out.append((s, d, name))
    return out


def plot_timeline(report: dict, path: str, title: Optional[str] = None) -> None:
    """Draws the traced cores' instructions of one launch as a timeline (time in us) saved to `path`.
    ValueError when the report has no traced instructions."""
    require_matplotlib()
    import matplotlib.pyplot as plt

    rows = _rows(report)
    if not rows:
        raise ValueError("the report has no traced instructions to draw (DGA_NPU_MODEL_TRACE matched no core)")
    # The axis runs to the launch's last core's end (dashed), which may be later than the traced cores'.
    end = max((c["end_us"] for c in report["cores"]), default=0.0)
    span = max([end] + [s + d for _, _, ev in rows for s, d, _ in ev]) or 1.0
    pipes = ordered_pipes({p for _, p, _ in rows})
    colours = {p: plt.get_cmap("tab10")(i % 10) for i, p in enumerate(pipes)}
    fig, ax = plt.subplots(figsize=(14, 0.45 * len(rows) + 1.8))
    for y, (_, pipe, events) in enumerate(rows):
        events = _merged(events, MERGE_FRACTION * span)
        ax.broken_barh([(s, d) for s, d, _ in events], (y - 0.4, 0.8), facecolors=colours[pipe],
                       edgecolors="black", linewidth=0.2 if len(events) <= OUTLINED_BARS else 0)
        free = 0.0  # labels do not overlap: a bar is labelled when it starts after the last labelled one ends
        for s, d, name in events:
            if name and d > LABEL_MIN_FRACTION * span and s >= free:
                ax.text(s + d / 2, y, name, ha="center", va="center", fontsize=6, clip_on=True)
                free = s + d
    ax.axvline(end, color="black", linestyle="--", linewidth=0.8, label="last core's end")
    ax.legend(loc="upper right", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, span)
    ax.set_xlabel("time from the launch's start (us)")
    ax.grid(axis="x", alpha=0.3)
    name = title or f"{report.get('kernel')}: {report['time_us']:.3f} us predicted by the timing model"
    ax.set_title(name, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
