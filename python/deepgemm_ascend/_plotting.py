"""matplotlib for the package's plots (bench --plot, the timing model's timelines), imported only when a plot is
drawn: it is an optional dependency (the `plot` extra)."""


def require_matplotlib(what: str):
    """matplotlib with the Agg backend; RuntimeError naming `what` needs it, with an install hint, when missing."""
    try:
        import matplotlib
    except ImportError as exc:
        raise RuntimeError(f"{what} needs matplotlib, which is not installed: pip install matplotlib") from exc
    matplotlib.use("Agg")
    return matplotlib
