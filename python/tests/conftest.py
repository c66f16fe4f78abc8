import random

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    random.seed(0)
    yield


# ---- DGA_BACKEND=npu-model: the NPU kernels on the instruction model -------------------------------------
# A call the NPU kernels do not implement (NotImplementedError: no NPU kernel for the dtype / entry point,
# or a launch too large for the model) is reported as skipped with its reason; the summary counts the cases
# per family (test file) and skip reason.
import os  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402

NPU_MODEL = os.environ.get("DGA_BACKEND") == "npu-model"
_model_counts = defaultdict(Counter)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not NPU_MODEL:
        return
    if rep.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(NotImplementedError):
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1] or 0, f"not on the NPU kernels: {call.excinfo.value}")
    if rep.when == "call" or (rep.when == "setup" and rep.outcome != "passed"):
        family = item.path.stem.removeprefix("test_")
        if rep.outcome == "skipped":
            why = str(rep.longrepr[2]) if isinstance(rep.longrepr, tuple) else "skipped"
            kind = "too large for the model" if "too large for the model" in why else "no NPU kernel"
            _model_counts[family][f"skipped ({kind})"] += 1
        else:
            _model_counts[family][rep.outcome] += 1


def pytest_terminal_summary(terminalreporter):
    if not NPU_MODEL or not _model_counts:
        return
    terminalreporter.section("npu-model: test cases per family")
    for family in sorted(_model_counts):
        c = _model_counts[family]
        terminalreporter.write_line(f"{family}: " + ", ".join(f"{n} {k}" for k, n in sorted(c.items())))
