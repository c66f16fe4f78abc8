"""Switching the model's timing mode on around a block of calls and collecting the launches' reports."""
import contextlib
import os
import tempfile
from typing import Iterator, List, Optional

from .report import parse_lines

_ENV = ("DGA_NPU_MODEL_TIMING", "DGA_NPU_MODEL_TIMING_ONLY", "DGA_NPU_MODEL_TRACE")


class Capture:
    """The reports of the launches made inside `capture(...)`, filled in when the block ends."""

    def __init__(self, path: str):
        self.path = path
        self.launches: List[dict] = []


@contextlib.contextmanager
def capture(path: Optional[str] = None, timing_only: bool = False, trace: Optional[str] = None) -> Iterator[Capture]:
    """Runs the block with the model's timing mode on (the model reads the environment at each launch).

    path: the report file the launches append to (default: a temporary file, removed afterwards);
    timing_only: DGA_NPU_MODEL_TIMING_ONLY=1, the arithmetic is skipped (results are garbage);
    trace: DGA_NPU_MODEL_TRACE, the prefix of the traced cores' names (default: the first core's group).
    The environment is restored afterwards. Only calls on the npu-model backend launch on the model."""
    own = path is None
    if own:
        fd, path = tempfile.mkstemp(prefix="dga_timing_", suffix=".jsonl")
        os.close(fd)
    start = os.path.getsize(path) if os.path.exists(path) else 0
    saved = {k: os.environ.get(k) for k in _ENV}
    os.environ["DGA_NPU_MODEL_TIMING"] = path
    os.environ["DGA_NPU_MODEL_TIMING_ONLY"] = "1" if timing_only else "0"
    if trace:
        os.environ["DGA_NPU_MODEL_TRACE"] = trace
    else:
        os.environ.pop("DGA_NPU_MODEL_TRACE", None)
    result = Capture(path)
    try:
        yield result
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if os.path.exists(path):
            with open(path) as f:
                f.seek(start)
                result.launches = parse_lines(f.read().splitlines(), path)
        if own:
            os.unlink(path)
