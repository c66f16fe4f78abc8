"""The NPU instruction model's timing reports (DGA_NPU_MODEL_TIMING): read them, print them, draw them.

* `capture(...)`: a context manager that switches the timing mode on for the launches inside it and
  collects their reports;
* `read_reports(path)`: the reports of a file, one JSON object per line (one per launch);
* `format_report(report)` / `summarise(report)`: a text report of one launch and its key figures;
* `plot_timeline(report, path)`: a timeline of the traced cores' pipes (needs matplotlib).

`python -m deepgemm_ascend.npu_timing FILE [--plot PNG] [--launch N]` prints the reports of FILE (of any
program run on the model, CATLASS's examples too) and draws one launch's timeline.
"""
from .capture import capture
from .plot import plot_timeline
from .report import format_report, pipe_stats, read_reports, summarise

__all__ = ["capture", "format_report", "pipe_stats", "plot_timeline", "read_reports", "summarise"]
