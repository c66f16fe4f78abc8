"""A small progress display for long benchmark runs (no third-party dependency).

With a bar (stderr is a terminal and it was not disabled) one line is redrawn in place with
'\\r'. Without a bar, one line is printed per finished case, which reads well in CI logs.
"""
import shutil
import sys
import time


def _fmt_ms(x):
    return "-" if x is None else f"{x:.3f} ms"


def case_summary(row: dict) -> str:
    """One-line summary of a finished case."""
    if row.get("status") == "ERROR":
        return f"ERROR {row.get('error', '')}"
    ratio = row.get("ratio")
    ratio_s = "-" if ratio is None else f"{ratio:.2f}"
    diff = row.get("diff")
    diff_s = "-" if diff is None else f"{diff:.1e}"
    return (f"ours {_fmt_ms(row.get('ours_ms'))} ({row.get('ours_tflops', 0):.3f} TFLOPS), "
            f"torch {_fmt_ms(row.get('torch_ms'))}, ratio {ratio_s}, diff {diff_s}, {row.get('status')}")


class Progress:
    """Progress over `total` cases, written to `stream` (stderr by default).

    bar=None picks the bar when the stream is a terminal. enabled=False prints nothing at all.
    """

    def __init__(self, total: int, bar=None, stream=None, enabled: bool = True, width: int = 24):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        isatty = getattr(self.stream, "isatty", lambda: False)()
        self.bar = enabled and (isatty if bar is None else bar)
        self.width = width
        self.done = 0
        self.label = ""
        self.phase = ""
        self.t0 = time.perf_counter()
        self.case_t0 = self.t0

    def _bar_line(self) -> str:
        filled = int(self.width * self.done / self.total) if self.total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.perf_counter() - self.t0
        text = f"[{bar}] {self.done}/{self.total} {elapsed:6.1f}s  {self.label}"
        if self.phase:
            text += f": {self.phase}"
        cols = shutil.get_terminal_size((100, 20)).columns
        return text[: max(cols - 1, 20)].ljust(max(cols - 1, 20))

    def _draw(self):
        self.stream.write("\r" + self._bar_line())
        self.stream.flush()

    def start(self, label: str):
        """A new case starts."""
        self.label, self.phase = label, ""
        self.case_t0 = time.perf_counter()
        if self.bar:
            self._draw()

    def status(self, phase: str):
        """The running case entered a new phase (preparing, checking, timing...)."""
        self.phase = phase
        if self.bar:
            self._draw()

    def finish(self, row: dict):
        """The running case finished with result `row`."""
        self.done += 1
        self.phase = ""
        if not self.enabled:
            return
        if self.bar:
            self._draw()
        else:
            took = time.perf_counter() - self.case_t0
            self.stream.write(f"[{self.done}/{self.total}] {self.label}: {case_summary(row)} ({took:.1f}s)\n")
            self.stream.flush()

    def close(self):
        """Clears the bar line and prints how many cases ran in how long."""
        if not self.enabled:
            return
        if self.bar:
            cols = shutil.get_terminal_size((100, 20)).columns
            self.stream.write("\r" + " " * max(cols - 1, 20) + "\r")
        self.stream.write(f"{self.done}/{self.total} cases in {time.perf_counter() - self.t0:.1f}s\n")
        self.stream.flush()
