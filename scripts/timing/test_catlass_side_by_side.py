#!/usr/bin/env python3
"""Tests of scripts/catlass_side_by_side.py's pairing table, shape choice and input files (no model run):
    python scripts/timing/test_catlass_side_by_side.py [--catlass DIR]
The input-file test runs examples 53's, 54's and 55's generators at a small shape (needs torch)."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import catlass_side_by_side as sbs  # noqa: E402
import npu_run  # noqa: E402

CATLASS = os.path.abspath(os.environ.get("DGA_CATLASS", os.path.join(sbs.ROOT, "..", "shared", "third_party",
                                                                      "catlass")))


class PairTable(unittest.TestCase):
    def test_each_family_exists_and_takes_the_pairs_shapes(self):
        from deepgemm_ascend.npu_timing.families import FAMILIES
        for pair in sbs.PAIRS.values():
            with self.subTest(pair.key):
                self.assertIn(pair.family, FAMILIES)
                self.assertEqual(FAMILIES[pair.family].dims, pair.dims)

    def test_each_program_has_its_target(self):
        for pair in sbs.PAIRS.values():
            with self.subTest(pair.key):
                names = [t[0] for t in npu_run.targets(sbs.program_dir(pair, CATLASS))]
                self.assertIn(pair.target, names)

    def test_published_shapes_are_the_documents(self):
        doc = sbs.ctc.PUBLISHED[sbs.ctc.DOC_ASWT]["times"]
        self.assertEqual(dict(sbs.PAIRS["43-fp16"].published), {s: t[0] for s, t in doc.items()})
        self.assertEqual(dict(sbs.PAIRS["43-fp16-aswt"].published), {s: t[1] for s, t in doc.items()})


class Shapes(unittest.TestCase):
    def test_explicit_shapes_go_to_the_pairs_of_their_dimensions(self):
        specs = sbs.parse_shapes(["256,512,1024", "2,128,256,512", "256,512,1024"])
        self.assertEqual(sbs.pair_shapes(sbs.PAIRS["53"], specs), [(256, 512, 1024)])
        self.assertEqual(sbs.pair_shapes(sbs.PAIRS["60"], specs), [(2, 128, 256, 512)])

    def test_named_sets(self):
        self.assertEqual(sbs.pair_shapes(sbs.PAIRS["43"], ["issue"]), list(sbs.ISSUE_DENSE))
        self.assertEqual(sbs.pair_shapes(sbs.PAIRS["55"], ["quick", "issue"]),
                         [sbs.QUICK_GROUPED] + list(sbs.ISSUE_GROUPED))
        self.assertEqual(sbs.pair_shapes(sbs.PAIRS["53"], ["published"]), [])
        self.assertEqual(len(sbs.pair_shapes(sbs.PAIRS["43-fp16"], ["published"])), 7)

    def test_bad_specs(self):
        for bad in ("1,2", "1,2,3,4,5", "a,b,c", "0,4,4", "fast"):
            with self.subTest(bad), self.assertRaises(Exception):
                sbs.parse_shapes([bad])

    def test_grouped_programs_take_the_total_rows(self):
        self.assertEqual(sbs.PAIRS["60"].args((8, 4096, 4096, 7168)), ["8", "32768", "4096", "7168", "0"])
        self.assertEqual(sbs.PAIRS["55"].args((2, 128, 256, 512))[:4], ["2", "256", "256", "512"])

    def test_random_groups_cover_at_most_the_rows(self):
        rows = sbs.random_group_rows(32768, 8)
        self.assertTrue(0 < rows <= 32768)
        self.assertLess(sbs.catlass_flops(sbs.PAIRS["60"], (8, 4096, 4096, 7168)), 2.0 * 32768 * 4096 * 7168 + 1)


class InputFiles(unittest.TestCase):
    """The zero-filled inputs have the sizes the examples' own generators write."""

    def generated_sizes(self, example, args, data):
        with tempfile.TemporaryDirectory() as tmp:
            gen = sorted(f for f in os.listdir(os.path.join(CATLASS, "examples", example))
                         if f.startswith("gen_data"))[0]
            cmd = [sys.executable, os.path.join(CATLASS, "examples", example, gen)] + args
            with open(cmd[1]) as fh:
                cmd += ["--data-root", tmp] if "--data-root" in fh.read() else []
            subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300)  # 55's then runs no program
            d = os.path.join(tmp, data)
            return {f: os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f in
                    ("a_8.bin", "b_8.bin", "a_scale.bin", "b_scale.bin")}

    def check(self, key, shape, args, data):
        ours = {os.path.basename(p): n for p, n in sbs.PAIRS[key].inputs(shape).items()}
        self.assertEqual(self.generated_sizes(os.path.basename(sbs.PAIRS[key].program), args, data), ours)

    def test_53(self):
        self.check("53", (128, 256, 96), ["128", "256", "96", "0", "1"], "data/input")

    def test_54(self):
        self.check("54", (128, 256, 96), ["128", "256", "96", "0", "1"], "data/input")

    def test_55(self):
        self.check("55", (2, 64, 256, 96), ["2", "128", "256", "96", "0", "float8_e4m3fn", "0"], "data")


if __name__ == "__main__":
    unittest.main()
