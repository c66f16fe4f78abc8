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


# ---- The smoke set (scripts/test.sh --quick, `-m smoke`): one fast case per kernel family -------------------
# Marked here by node id, so that the set reads as one list. In a `-m smoke` run a listed case that its file
# no longer has fails the collection: the set cannot shrink silently when a test is renamed.
SMOKE = {
    "test_gemm_bf16.py::test_accumulate_in_place[bf16]": "BF16 GEMM",
    "test_gemm_fp8.py::test_fp8_block_recipe[1x300x256-nt]": "FP8 GEMM",
    "test_gemm_fp8.py::test_fp4_x_fp4[64]": "FP4 GEMM",
    "test_grouped_gemm.py::test_fp8_contiguous": "grouped, M-contiguous",
    "test_grouped_gemm.py::test_bf16_masked": "grouped, masked",
    "test_grouped_gemm.py::test_bf16_k_grouped[False]": "grouped, K-grouped",
    "test_mqa_logits.py::test_single_query_row": "MQA logits",
    "test_paged_mqa_logits.py::test_paged[False-1-32-fp8]": "paged MQA logits",
    "test_hc_prenorm.py::test_matches_tf32_reference[None-8-1024-1]": "HC pre-norm",
    "test_mega_moe.py::test_single_rank_uneven_routing_and_small_ring": "Mega MoE",
    "test_mega_moe.py::test_on_the_npu_model_matches_the_host[bf16-1]": "Mega MoE on the NPU model",
    "test_layout.py::test_bit_exact_and_round_trip[nz-64x128-bf16]": "layout",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    names = {f"{item.path.name}::{item.name}": item for item in items}
    files = {item.path.name for item in items}
    missing = [case for case in SMOKE if case.split("::")[0] in files and case not in names]
    if missing and "smoke" in config.getoption("markexpr"):
        raise pytest.UsageError(f"smoke cases not found (update SMOKE in conftest.py): {missing}")
    for case in SMOKE:
        if case in names:
            names[case].add_marker(pytest.mark.smoke)
