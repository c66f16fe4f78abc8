#!/usr/bin/env python3
"""Tests of scripts/npu_run.py's pass decision with --as-measured (no build, no model run):
    python scripts/timing/test_npu_run_as_measured.py
The end-to-end check is scripts/timing/as_measured_probe (README.md there)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import npu_run  # noqa: E402

SIZE_LINE = ("[ERROR][Core_0][/x/impl/basic_api/utils/kernel_check_data_copy_util.h:220][ReportTensorSizeOverflow]"
             "[1] Failed to check srcLocal size in DataCopyPad with DataCopyExtParams from VECOUT to GM, tensor size "
             "needs to be at least 131072 bytes, while current tensor size is only 126976 bytes.")
OTHER_LINE = "[ERROR][Core_0][/x/impl/basic_api/kernel_check.h:10][Check][1] Failed to check blockLen value."
MARK = npu_run.AS_MEASURED_MARK


def output(*lines):
    return "\n".join(lines + ("Compare success.",)) + "\n"


class AsMeasuredDecision(unittest.TestCase):
    def test_a_clean_run_passes_either_way(self):
        self.assertTrue(npu_run.reports_success(output()))
        self.assertTrue(npu_run.reports_success(output(), as_measured=True))

    def test_size_checks_fail_a_normal_run(self):
        self.assertFalse(npu_run.reports_success(output(SIZE_LINE, MARK)))

    def test_size_checks_each_let_pass_are_warnings_as_measured(self):
        self.assertTrue(npu_run.reports_success(output(SIZE_LINE, SIZE_LINE.replace("src", "dst"), MARK, MARK),
                                                as_measured=True))

    def test_another_devkit_check_still_fails(self):
        self.assertFalse(npu_run.reports_success(output(SIZE_LINE, OTHER_LINE, MARK, MARK), as_measured=True))
        self.assertFalse(npu_run.reports_success(output(OTHER_LINE, MARK), as_measured=True))

    def test_a_sigabrt_let_pass_without_a_size_line_fails(self):
        self.assertFalse(npu_run.reports_success(output(SIZE_LINE, MARK, MARK), as_measured=True))

    def test_a_failed_golden_check_still_fails(self):
        text = output(SIZE_LINE, MARK).replace("Compare success.", "Compare failed. Error count: 3")
        self.assertFalse(npu_run.reports_success(text, as_measured=True))

    def test_the_environment_is_set_only_as_measured(self):
        os.environ["DGA_RUN_AS_MEASURED"] = "1"
        try:
            self.assertNotIn("DGA_RUN_AS_MEASURED", npu_run.model_env("/nonexistent/prog"))
            self.assertEqual(npu_run.model_env("/nonexistent/prog", True)["DGA_RUN_AS_MEASURED"], "1")
        finally:
            del os.environ["DGA_RUN_AS_MEASURED"]


if __name__ == "__main__":
    unittest.main()
