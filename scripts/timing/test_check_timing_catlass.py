#!/usr/bin/env python3
"""Tests of scripts/check_timing_catlass.py's parsing and checks on fake timing records (no model run):
    python scripts/timing/test_check_timing_catlass.py"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check_timing_catlass as ctc  # noqa: E402


def record_path(records, kernel, shape):
    return os.path.join(records, f"{kernel}_{shape[0]}_{shape[1]}_{shape[2]}.jsonl")


def write_records(records, scale=None, skip=()):
    """One fake record per point, predicted = measured * scale.get(point name, 1.0)."""
    scale = scale or {}
    for _, kernel, shape, measured in ctc.points():
        name = ctc.point_name(kernel, shape)
        if name in skip:
            continue
        us = measured * scale.get(name, 1.0)
        with open(record_path(records, kernel, shape), "w") as fh:
            fh.write(json.dumps({"kernel": "Catlass::KernelAdapter<GemmKernel>", "time_us": us,
                                 "cycles": us * 1650.0, "cores": 32}) + "\n")


def check(records, *extra):
    """(exit status, printed text) of a --reuse run on the records."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = ctc.main(["--reuse", "--records", records, *extra])
    return status, out.getvalue()


class ReadRecords(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "r.jsonl")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, text):
        with open(self.path, "w") as fh:
            fh.write(text)

    def test_reads_each_line_and_ignores_blank_ones(self):
        self.write('{"kernel": "a", "time_us": 1.5, "cycles": 10, "extra": [1]}\n\n'
                   '{"kernel": "b", "time_us": 2, "cycles": 20.5}\n')
        recs = ctc.read_records(self.path)
        self.assertEqual([r["kernel"] for r in recs], ["a", "b"])
        self.assertEqual(sum(r["time_us"] for r in recs), 3.5)

    def test_missing_file_says_no_record_was_written(self):
        with self.assertRaisesRegex(ctc.RecordError, "no timing record was written"):
            ctc.read_records(self.path)

    def test_empty_file(self):
        self.write("\n")
        with self.assertRaisesRegex(ctc.RecordError, "empty"):
            ctc.read_records(self.path)

    def test_malformed_lines_name_their_line(self):
        for bad, why in (('{"kernel": "a", "time_us": 1, "cycles": 1}\n{"kernel": "a", "time_us": 1,', ":2: not a JSON"),
                         ('[1, 2]\n', ":1: not a JSON object"),
                         ('{"time_us": 1, "cycles": 1}\n', "no \"kernel\""),
                         ('{"kernel": "a", "time_us": "1", "cycles": 1}\n', "time_us"),
                         ('{"kernel": "a", "time_us": -1, "cycles": 1}\n', "time_us"),
                         ('{"kernel": "a", "time_us": NaN, "cycles": 1}\n', "time_us"),
                         ('{"kernel": "a", "time_us": 1, "cycles": true}\n', "cycles"),
                         ('{"kernel": "a", "time_us": 1}\n', "cycles")):
            self.write(bad)
            with self.assertRaisesRegex(ctc.RecordError, why):
                ctc.read_records(self.path)


class Checks(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.records = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def test_table_has_the_26_published_points(self):
        self.assertEqual(len(ctc.points()), 26)
        self.assertEqual(len({(k, s) for _, k, s, _ in ctc.points()}), 26)
        self.assertEqual({k for _, k, _, _ in ctc.points()}, set(ctc.PROGRAMS))

    def test_exact_predictions_pass(self):
        write_records(self.records)
        status, text = check(self.records)
        self.assertEqual(status, 0, text)
        self.assertIn("check_timing_catlass: pass", text)

    def test_a_ratio_out_of_range_fails(self):
        bad = ctc.point_name("basic_matmul_aswt", (1024, 2368, 512))
        for factor in (0.74, 1.34):
            write_records(self.records, {bad: factor})
            status, text = check(self.records)
            self.assertEqual(status, 1, text)
            self.assertRegex(text, r"\[1024,2368,512\]\s+basic_matmul_aswt .* NO")

    def test_excluding_the_bad_point_passes(self):
        bad = ctc.point_name("basic_matmul_aswt", (1024, 2368, 512))
        write_records(self.records, {bad: 2.0})
        status, text = check(self.records, "--exclude", bad)
        self.assertEqual(status, 0, text)
        self.assertIn("excluded", text)

    def test_an_unknown_exclusion_is_refused(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            check(self.records, "--exclude", "basic_matmul_aswt@1,2,3")

    def test_a_swapped_order_fails_within_the_ratio_range(self):
        # measured 38.15 (swizzle) vs 30.51 (aswt): predicted 31.0 vs 32.0, both ratios in range
        shape = (2208, 2048, 1024)
        write_records(self.records, {ctc.point_name("basic_matmul_swizzle", shape): 31.0 / 38.15,
                                     ctc.point_name("basic_matmul_aswt", shape): 32.0 / 30.51})
        status, text = check(self.records)
        self.assertEqual(status, 1, text)
        self.assertRegex(text, r"\[2208,2048,1024\]\s+basic_matmul_aswt\s+faster by 25%: NO")
        self.assertEqual(text.count(": NO"), 1)

    def test_pairs_within_the_gap_are_not_ordered(self):
        # [2048,2048,256] (46): 11.97 vs 12.09, 1 % apart: a swapped prediction is no failure
        shape = (2048, 2048, 256)
        write_records(self.records, {ctc.point_name("matmul_fixpipe", shape): 1.1,
                                     ctc.point_name("matmul_fixpipe_opti", shape): 0.9})
        status, text = check(self.records)
        self.assertEqual(status, 0, text)

    def test_a_missing_record_fails_with_a_clear_error(self):
        gone = ctc.point_name("matmul_fixpipe_opti", (567, 488, 399))
        write_records(self.records, skip={gone})
        status, text = check(self.records)
        self.assertEqual(status, 1, text)
        self.assertIn("no timing record was written", text)

    def test_json_output(self):
        write_records(self.records, {ctc.point_name("matmul_fixpipe", (567, 488, 399)): 1.2})
        out = os.path.join(self.records, "out.json")
        status, _ = check(self.records, "--json", out)
        self.assertEqual(status, 0)
        with open(out) as fh:
            data = json.load(fh)
        self.assertEqual(len(data["points"]), 26)
        first = data["points"][0]
        self.assertEqual((first["kernel"], first["shape"]), ("matmul_fixpipe", [567, 488, 399]))
        self.assertAlmostEqual(first["ratio"], 1.2)
        self.assertEqual(data["failed"], 0)
        self.assertEqual(len(data["pairs"]), 9)  # pairs more than 10 % apart: 4 of 46's, 5 of ASWT's


if __name__ == "__main__":
    unittest.main()
