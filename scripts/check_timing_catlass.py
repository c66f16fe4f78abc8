#!/usr/bin/env python3
"""Checks the instruction model's timing mode against Huawei's measured Ascend 950 times of CATLASS kernels.

    python scripts/check_timing_catlass.py [--build BUILD_DIR] [--catlass DIR] [--timing-only] [--only KERNEL]
                                           [--exclude KERNEL@M,N,K ...] [--records DIR] [--json FILE]

Each (kernel, shape) point of PUBLISHED runs once on the model (scripts/npu_run.py) with the timing mode on:
DGA_NPU_MODEL_TIMING=<file> makes the model append one JSON object per kernel launch, one per line, with at
least "kernel", "time_us" and "cycles"; the point's predicted time is its launches' time_us summed (each
program launches one kernel). A functional run (the default) must also pass the program's golden check;
with --timing-only (DGA_NPU_MODEL_TIMING_ONLY=1: the model skips arithmetic and data movement) the results are
garbage and only the timing record is required. The records stay in --records (default
<build>/timing_catlass/<kernel>_<m>_<n>_<k>.jsonl); --reuse reads them from there instead of running.

Checks (exit status 1 if one fails):
  * every point not excluded: predicted / measured within [RATIO_LOW, RATIO_HIGH];
  * every pair (two kernels of one document at one shape) whose measured times differ by more than
    PAIR_GAP: the faster kernel is predicted faster (skipped when a point of the pair is excluded).
Points whose times were used to fit the model's constants are no test of it: FITTED lists them (excluded
always), --exclude adds more.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS_DIR = os.path.join(ROOT, "scripts", "timing", "catlass_pairs")
RATIO_LOW, RATIO_HIGH = 0.75, 1.33
PAIR_GAP = 0.10

# The documents (paths under CATLASS's root) and their measured times (Ascend 950, CANN 9.0.0), in us.
DOC_46 = "examples/46_ascend950_matmul_fixpipe_opti/46_ascend950_matmul_fixpipe_opti.md"
DOC_ASWT = "docs/zh/2_Design/01_kernel_design/05_aswt.md"
PUBLISHED = {
    DOC_46: {
        "kernels": ("matmul_fixpipe", "matmul_fixpipe_opti"),
        "times": {
            (567, 488, 399): (6.53, 6.34),
            (1226, 1557, 399): (15.06, 12.05),
            (2058, 2038, 256): (20.69, 12.64),
            (2048, 2048, 256): (11.97, 12.09),
            (2058, 2048, 256): (13.81, 12.38),
            (2048, 2038, 256): (19.09, 12.35),
        },
    },
    DOC_ASWT: {
        "kernels": ("basic_matmul_swizzle", "basic_matmul_aswt"),
        "times": {
            (1024, 1024, 1024): (14.95, 15.08),
            (2048, 2048, 256): (11.95, 12.09),
            (2208, 2048, 512): (22.07, 18.65),
            (2208, 2048, 1024): (38.15, 30.51),
            (1024, 2368, 512): (16.02, 12.00),
            (1024, 2368, 1024): (26.18, 19.82),
            (1024, 2368, 2048): (45.88, 34.25),
        },
    },
}

# Where each kernel's program is: (directory, under CATLASS's root when relative to it, npu_run target or "").
# Example 46 is CATLASS's own program; the others are ours, from
# CATLASS's templates (scripts/timing/catlass_pairs/README.md says why each is the measured kernel).
PROGRAMS = {
    "matmul_fixpipe_opti": ("catlass", "examples/46_ascend950_matmul_fixpipe_opti", ""),
    "matmul_fixpipe": ("ours", PAIRS_DIR, "matmul_fixpipe"),
    "basic_matmul_swizzle": ("ours", PAIRS_DIR, "basic_matmul_swizzle"),
    "basic_matmul_aswt": ("ours", PAIRS_DIR, "basic_matmul_aswt"),
}

# Points whose measured times the timing model's constants were fitted to ("kernel@m,n,k"): none yet.
FITTED = ()


def point_name(kernel, shape):
    return f"{kernel}@{shape[0]},{shape[1]},{shape[2]}"


def points():
    """[(document, kernel, shape, measured us)] in the documents' order."""
    out = []
    for doc, table in PUBLISHED.items():
        for shape, times in table["times"].items():
            for kernel, us in zip(table["kernels"], times):
                out.append((doc, kernel, shape, us))
    return out


class RecordError(Exception):
    pass


def read_records(path):
    """The timing records of one run: a list of dicts, each with kernel (str), time_us and cycles (numbers).
    Raises RecordError naming the file and line when there is none or one is malformed."""
    if not os.path.exists(path):
        raise RecordError(f"{path}: no timing record was written (does this build's model have the timing "
                          "mode, DGA_NPU_MODEL_TIMING?)")
    records = []
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise RecordError(f"{path}:{n}: not a JSON object: {e}") from None
            if not isinstance(rec, dict):
                raise RecordError(f"{path}:{n}: not a JSON object")
            if not isinstance(rec.get("kernel"), str):
                raise RecordError(f"{path}:{n}: no \"kernel\" name")
            for key in ("time_us", "cycles"):
                v = rec.get(key)
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or v == float("inf"):
                    raise RecordError(f"{path}:{n}: \"{key}\" is {v!r}, not a finite number >= 0")
            records.append(rec)
    if not records:
        raise RecordError(f"{path}: empty: the run wrote no timing record")
    return records


def run_point(kernel, shape, opts, path):
    """Runs one point on the model with the timing mode on; returns (passed, seconds, output tail)."""
    where, directory, target = PROGRAMS[kernel]
    if where == "catlass":
        directory = os.path.join(opts.catlass, directory)
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "npu_run.py"), directory, "--build", opts.build,
           "--catlass", opts.catlass]
    cmd += ["--target", target] if target else []
    cmd += ["--"] + [str(x) for x in shape] + ["0"]
    env = dict(os.environ, DGA_NPU_MODEL_TIMING=path)
    env.pop("DGA_NPU_MODEL_TIMING_ONLY", None)
    if opts.timing_only:
        env["DGA_NPU_MODEL_TIMING_ONLY"] = "1"
    if os.path.exists(path):
        os.remove(path)
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    out = r.stdout + r.stderr
    with open(path + ".log", "w") as fh:
        fh.write(" ".join(cmd) + "\n" + out)
    return r.returncode == 0, time.monotonic() - start, out[-2000:]


def evaluate(opts, excluded):
    """One result per point: dict with document, kernel, shape, measured_us, predicted_us (or None), ratio,
    within, excluded, passed (functional runs), error. The programs' directories run in parallel (two at a
    time), the points of one directory one after the other (they share its build)."""
    os.makedirs(opts.records, exist_ok=True)
    todo = [(doc, kernel, shape, measured) for doc, kernel, shape, measured in points()
            if not opts.only or kernel in opts.only]
    runs = {}
    if not opts.reuse:
        by_dir = {}
        for _, kernel, shape, _ in todo:
            by_dir.setdefault(PROGRAMS[kernel][1], []).append((kernel, shape))

        def run_dir(jobs):
            for kernel, shape in jobs:
                print(f"check_timing_catlass: running {point_name(kernel, shape)}", flush=True)
                runs[(kernel, shape)] = run_point(kernel, shape, opts, record_path(opts, kernel, shape))

        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(run_dir, by_dir.values()))
    return [result(opts, excluded, runs, *point) for point in todo]


def record_path(opts, kernel, shape):
    return os.path.join(opts.records, f"{kernel}_{shape[0]}_{shape[1]}_{shape[2]}.jsonl")


def result(opts, excluded, runs, doc, kernel, shape, measured):
    """The result of one point from its run (if it ran) and its timing records."""
    path = record_path(opts, kernel, shape)
    res = {"document": doc, "kernel": kernel, "shape": list(shape), "measured_us": measured,
           "predicted_us": None, "cycles": None, "ratio": None, "within": None, "launches": 0,
           "excluded": point_name(kernel, shape) in excluded, "passed": None, "seconds": None, "error": None}
    if (kernel, shape) in runs:
        passed, seconds, tail = runs[(kernel, shape)]
        res["passed"], res["seconds"] = passed, round(seconds, 1)
        if not passed and not opts.timing_only:
            res["error"] = f"the run did not pass (log: {path}.log): ..." + tail[-400:]
    try:
        records = read_records(path)
        res["predicted_us"] = sum(r["time_us"] for r in records)
        res["cycles"] = sum(r["cycles"] for r in records)
        res["launches"] = len(records)
        res["ratio"] = res["predicted_us"] / measured
        res["within"] = RATIO_LOW <= res["ratio"] <= RATIO_HIGH
    except RecordError as e:
        res["error"] = (res["error"] + "; " if res["error"] else "") + str(e)
    return res


def pair_checks(results):
    """For each document's shape with both kernels predicted and measured times more than PAIR_GAP apart:
    whether the measured-faster kernel is predicted faster."""
    by_key = {(r["document"], tuple(r["shape"]), r["kernel"]): r for r in results}
    out = []
    for doc, table in PUBLISHED.items():
        k0, k1 = table["kernels"]
        for shape in table["times"]:
            a, b = by_key.get((doc, shape, k0)), by_key.get((doc, shape, k1))
            if a is None or b is None:
                continue
            gap = max(a["measured_us"], b["measured_us"]) / min(a["measured_us"], b["measured_us"]) - 1
            if gap <= PAIR_GAP:
                continue
            check = {"document": doc, "shape": list(shape), "kernels": [k0, k1], "measured_gap": round(gap, 3),
                     "faster_measured": k0 if a["measured_us"] < b["measured_us"] else k1,
                     "faster_predicted": None, "ok": None, "skipped": None}
            if a["excluded"] or b["excluded"]:
                check["skipped"] = "a point of the pair is excluded"
            elif a["predicted_us"] is None or b["predicted_us"] is None:
                check["skipped"] = "a time is missing (counted at its point)"
            else:
                check["faster_predicted"] = k0 if a["predicted_us"] < b["predicted_us"] else k1
                check["ok"] = check["faster_predicted"] == check["faster_measured"]
            out.append(check)
    return out


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def report(results, pairs, timing_only):
    """Prints the tables; returns the number of failed checks."""
    failed = 0
    print(f"{'shape':<18} {'kernel':<22} {'measured us':>11} {'predicted us':>12} {'ratio':>6}  within "
          f"{RATIO_LOW}x-{RATIO_HIGH}x  run")
    for r in results:
        shape = "[" + ",".join(str(x) for x in r["shape"]) + "]"
        if r["excluded"]:
            verdict = "excluded"
        elif r["within"] is None:
            verdict = "NO TIME"
        else:
            verdict = "yes" if r["within"] else "NO"
        run = "-" if r["passed"] is None else ("pass" if r["passed"] else ("timing only" if timing_only else "FAIL"))
        run += "" if r["seconds"] is None else f" ({r['seconds']:.0f} s)"
        print(f"{shape:<18} {r['kernel']:<22} {r['measured_us']:>11.2f} {fmt(r['predicted_us']):>12} "
              f"{fmt(r['ratio']):>6}  {verdict:<18} {run}")
        if r["excluded"]:
            continue
        if r["error"] or not r["within"]:
            failed += 1
    for r in results:
        if r["error"]:
            print(f"  {point_name(r['kernel'], r['shape'])}: {r['error']}")
    print(f"pairs whose measured times differ by more than {PAIR_GAP:.0%}: is the faster one predicted faster?")
    for p in pairs:
        shape = "[" + ",".join(str(x) for x in p["shape"]) + "]"
        if p["skipped"]:
            verdict = f"skipped ({p['skipped']})"
        else:
            verdict = "yes" if p["ok"] else f"NO (predicted faster: {p['faster_predicted']})"
        print(f"  {shape:<18} {p['faster_measured']:<22} faster by {p['measured_gap']:.0%}: {verdict}")
        if p["ok"] is False:
            failed += 1
    return failed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"),
                   help="the project's build directory (libdga_npu_model.so with the timing mode)")
    p.add_argument("--catlass", default=os.path.join(ROOT, "..", "shared", "third_party", "catlass"))
    p.add_argument("--timing-only", action="store_true",
                   help="DGA_NPU_MODEL_TIMING_ONLY=1: no arithmetic or data movement, no golden check required")
    p.add_argument("--only", nargs="+", choices=sorted(PROGRAMS), help="only these kernels")
    p.add_argument("--exclude", nargs="+", default=[], metavar="KERNEL@M,N,K",
                   help="points left out of the checks, besides FITTED")
    p.add_argument("--records", default="", help="where the timing records go (default <build>/timing_catlass)")
    p.add_argument("--reuse", action="store_true", help="read the records of an earlier run instead of running")
    p.add_argument("--json", default="", help="write the results to this file")
    opts = p.parse_args(argv)
    opts.build = os.path.abspath(opts.build)
    opts.catlass = os.path.abspath(opts.catlass)
    opts.records = os.path.abspath(opts.records or os.path.join(opts.build, "timing_catlass"))
    known = {point_name(k, s) for _, k, s, _ in points()}
    unknown = [e for e in opts.exclude if e not in known]
    if unknown:
        p.error(f"--exclude: no such point {', '.join(unknown)} (the form is kernel@m,n,k, e.g. "
                f"{point_name('matmul_fixpipe', (567, 488, 399))})")
    excluded = set(FITTED) | set(opts.exclude)
    results = evaluate(opts, excluded)
    pairs = pair_checks(results)
    failed = report(results, pairs, opts.timing_only)
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump({"sources": {d: os.path.join(opts.catlass, d) for d in PUBLISHED},
                       "ratio_range": [RATIO_LOW, RATIO_HIGH], "pair_gap": PAIR_GAP, "excluded": sorted(excluded),
                       "timing_only": opts.timing_only, "points": results, "pairs": pairs, "failed": failed},
                      fh, indent=1)
    print(f"check_timing_catlass: {'FAIL' if failed else 'pass'} ({failed} failed check(s))")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
