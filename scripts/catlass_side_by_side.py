#!/usr/bin/env python3
"""CATLASS's Ascend 950 examples and our kernels side by side on the timing model, at the same shapes.

    python scripts/catlass_side_by_side.py [--build BUILD_DIR] [--only PAIR ...] [--shapes SPEC ...]
                                           [--records DIR] [--json FILE] [--list]

Each pair (PAIRS) is a CATLASS program and the `deepgemm-ascend model` family that does the same GEMM with
our kernels. At each shape both run timing-only on the instruction model (DGA_NPU_MODEL_TIMING_ONLY=1: the
model skips arithmetic and data movement, results are garbage): the CATLASS program built and launched as
scripts/npu_run.py does, ours through the public API (npu_timing.model_run.run_case). Each side's predicted
time is its launches' time_us summed; the table gives both, ours / CATLASS, and the same ratio per FLOP where
the two do different work (example 60's groups are random). The times are predictions of our timing model,
not measurements.

--shapes takes `quick` (the default: one small shape per pair), `issue` (the speed targets' shapes),
`published` (the shapes with Huawei's measured times in CATLASS's documents, printed beside the
predictions), or explicit shapes in our families' form: M,N,K for dense pairs, groups,rows per group,N,K for
grouped ones (each applies to the pairs of its number of dimensions).

A CATLASS program is stopped as soon as its timing records are written: its own golden check (a naive CPU
GEMM, hours at the large shapes) is of no use in a timing-only run. Programs that read input files get
zero-filled ones of the sizes they read instead of their generator's (whose golden is as slow).
"""
import argparse
import concurrent.futures
import ctypes
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_timing_catlass as ctc  # noqa: E402
import npu_run  # noqa: E402

Shape = Tuple[int, ...]
QUICK_DENSE, QUICK_GROUPED = (1024, 1024, 1024), (2, 512, 1024, 1024)
ISSUE_DENSE = ((4096, 7168, 16384), (4096, 2112, 7168), (2048, 7168, 2048))
ISSUE_GROUPED = ((8, 4096, 4096, 7168), (4, 8192, 7168, 2048))
MX_BLOCK = 32  # K values per UE8M0 scale (CATLASS's MX_SCALE_GROUP_NUM)


@dataclasses.dataclass(frozen=True)
class Pair:
    key: str
    program: str  # directory: under CATLASS's root, or ctc.PAIRS_DIR (our host program of CATLASS's templates)
    target: str  # the npu_run target
    family: str  # ours: a deepgemm_ascend.npu_timing.families.FAMILIES name
    note: str  # how the two differ
    args: Callable[[Shape], List[str]]  # the program's arguments at one of our family's shapes
    inputs: Optional[Callable[[Shape], Dict[str, int]]] = None  # input files (path under the run dir: bytes)
    rows: Optional[Callable[[Shape], int]] = None  # the rows CATLASS multiplies, when not all of ours
    published: Tuple[Tuple[Shape, float], ...] = ()  # Huawei's measured times of the program (us)

    @property
    def grouped(self) -> bool:
        return self.family.startswith("grouped")

    @property
    def dims(self) -> int:
        return 4 if self.grouped else 3


def _dense_args(shape: Shape) -> List[str]:
    return [str(x) for x in shape] + ["0"]


def _mx_scale_k(k: int) -> int:
    """K's UE8M0 scales per row, rounded up to a pair (CATLASS stores them two at a time)."""
    return 2 * math.ceil(math.ceil(k / MX_BLOCK) / 2)


def _mx_dense_inputs(example: str, code_bits: int):
    """Input files of examples 53 / 54 (A [M, K], B [N, K] codes, their scales), under the run directory."""
    def files(shape: Shape) -> Dict[str, int]:
        m, n, k = shape
        d = f"examples/{example}/data/input"
        return {f"{d}/a_8.bin": m * k * code_bits // 8, f"{d}/b_8.bin": n * k * code_bits // 8,
                f"{d}/a_scale.bin": m * _mx_scale_k(k), f"{d}/b_scale.bin": n * _mx_scale_k(k)}
    return files


def _grouped_args(extra: List[str]):
    """CATLASS's grouped programs take the total M: groups x rows per group."""
    def args(shape: Shape) -> List[str]:
        g, rows, n, k = shape
        return [str(g), str(g * rows), str(n), str(k)] + extra
    return args


def _mx_grouped_inputs(shape: Shape) -> Dict[str, int]:
    """Example 55's files (fp8 codes): A [G * rows, K], B [G, K, N], their scales, in output/bin/data."""
    g, rows, n, k = shape
    d = "output/bin/data"
    return {f"{d}/a_8.bin": g * rows * k, f"{d}/b_8.bin": g * k * n,
            f"{d}/a_scale.bin": g * rows * _mx_scale_k(k), f"{d}/b_scale.bin": g * n * _mx_scale_k(k)}


def random_group_rows(m: int, groups: int) -> int:
    """The rows example 60 multiplies: its group list is `groups` values of glibc's rand() % (m + 1) after
    srand(0), sorted, as cumulative ends (golden::GenerateGroupList), so the last, the largest, is the row
    count (not m)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.srand(0)
    return max(libc.rand() % (m + 1) for _ in range(groups))


def _aswt_published(column: int) -> Tuple[Tuple[Shape, float], ...]:
    return tuple((s, t[column]) for s, t in ctc.PUBLISHED[ctc.DOC_ASWT]["times"].items())


PAIRS: Dict[str, Pair] = {p.key: p for p in (
    Pair("43", "examples/43_ascend950_basic_matmul", "43_ascend950_basic_matmul", "bf16",
         "CATLASS 43 multiplies fp32 A and B (L0 K tile 32, fp32 out): the fp32 cube rate, not bf16's; "
         "A and B row-major", _dense_args),
    Pair("43-fp16", ctc.PAIRS_DIR, "basic_matmul_swizzle", "bf16",
         "example 43's kernel (swizzle scheduler) with fp16 A and B, L0 K tile 64, as 05_aswt.md measured "
         "it (scripts/timing/catlass_pairs): fp16 and bf16 share the cube rate; A and B row-major",
         _dense_args, published=_aswt_published(0)),
    Pair("43-fp16-aswt", ctc.PAIRS_DIR, "basic_matmul_aswt", "bf16",
         "the same with CATLASS's ASWT scheduler (05_aswt.md's basic_matmul_aswt)", _dense_args,
         published=_aswt_published(1)),
    Pair("53", "examples/53_ascend950_fp8_mx_matmul", "53_ascend950_fp8_mx_matmul", "mxfp8",
         "both e4m3 x e4m3 with UE8M0 scales per 32 K values; CATLASS writes fp32 C, ours bf16 D",
         _dense_args, _mx_dense_inputs("53_ascend950_fp8_mx_matmul", 8)),
    Pair("53-aswt", "examples/53_ascend950_fp8_mx_matmul", "53_ascend950_fp8_mx_matmul_aswt", "mxfp8",
         "53's ASWT scheduler variant", _dense_args, _mx_dense_inputs("53_ascend950_fp8_mx_matmul", 8)),
    Pair("54", "examples/54_ascend950_fp4_mx_matmul", "54_ascend950_fp4_mx_matmul", "mxfp4",
         "both e2m1 x e2m1 with UE8M0 scales per 32 K values; CATLASS writes fp32 C, ours bf16 D", _dense_args,
         _mx_dense_inputs("54_ascend950_fp4_mx_matmul", 4)),
    Pair("54-fp8xfp4", "examples/54_ascend950_fp4_mx_matmul", "54_ascend950_fp4_mx_matmul", "fp8xfp4",
         "CATLASS 54 is fp4 x fp4, ours fp8 x fp4 (its fp4 B widened to e4m3, the fp8 cube rate): not the "
         "same GEMM, the production recipe beside CATLASS's nearest", _dense_args,
         _mx_dense_inputs("54_ascend950_fp4_mx_matmul", 4)),
    Pair("51", "examples/51_ascend950_quant_matmul_per_group_per_block_tla",
         "51_ascend950_quant_matmul_per_group_per_block_tla", "fp8",
         "CATLASS 51 is int8 x int8 (int32 accumulate) with fp32 per-group A / per-block B scales applied on "
         "the vector cores, fp16 out; ours fp8 with (1,128) x (128,128) fp32 scales: int8 and fp8 share the "
         "950 cube rate", _dense_args),
    Pair("60", "examples/60_ascend950_grouped_matmul_slice_m", "60_ascend950_grouped_matmul_slice_m",
         "grouped-bf16",
         "CATLASS 60 is fp16 with random group sizes whose sum is below groups x rows (compare per FLOP), "
         "B [K, N] row-major; ours bf16, equal groups, B [N, K]", _grouped_args(["0"]),
         rows=lambda s: random_group_rows(s[0] * s[1], s[0])),
    Pair("55", "examples/55_ascend950_mx_grouped_matmul_slice_m", "55_ascend950_mx_grouped_matmul_slice_m",
         "grouped-mxfp8",
         "both e4m3 MX with equal groups and bf16 out; CATLASS's B [K, N] row-major (transB 0), ours [N, K]",
         _grouped_args(["0", "float8_e4m3fn", "0"]), _mx_grouped_inputs),
    Pair("55-all", "examples/55_ascend950_mx_grouped_matmul_slice_m", "55_ascend950_mx_grouped_matmul_slice_m_all",
         "grouped-mxfp8", "55 with its ASWT, base-M and preload options", _grouped_args(["0", "float8_e4m3fn", "0"]),
         _mx_grouped_inputs),
)}


def parse_shapes(specs: List[str]) -> List[object]:
    """`quick` / `issue` / `published` as they are, explicit shapes as int tuples of 3 or 4."""
    out = []
    for spec in specs:
        if spec in ("quick", "issue", "published"):
            out.append(spec)
            continue
        try:
            shape = tuple(int(x) for x in spec.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"--shapes: {spec!r} is not quick, issue, published or numbers") from None
        if len(shape) not in (3, 4) or min(shape) <= 0:
            raise argparse.ArgumentTypeError(f"--shapes: {spec!r}: 3 (M,N,K) or 4 (groups,rows,N,K) positive numbers")
        out.append(shape)
    return out


def pair_shapes(pair: Pair, specs: List[object]) -> List[Shape]:
    """The shapes one pair runs at, in order, without repeats."""
    out: List[Shape] = []
    for spec in specs:
        if spec == "quick":
            new = [QUICK_GROUPED if pair.grouped else QUICK_DENSE]
        elif spec == "issue":
            new = list(ISSUE_GROUPED if pair.grouped else ISSUE_DENSE)
        elif spec == "published":
            new = [s for s, _ in pair.published]
        else:
            new = [spec] if len(spec) == pair.dims else []
        out += [s for s in new if s not in out]
    return out


def program_dir(pair: Pair, catlass: str) -> str:
    return pair.program if os.path.isabs(pair.program) else os.path.join(catlass, pair.program)


def build_program(pair: Pair, opts) -> str:
    """Builds the pair's target as npu_run.py does; returns the executable."""
    example = program_dir(pair, opts.catlass)
    for name, kind, srcs, defs in npu_run.targets(example):
        if name == pair.target:
            return npu_run.build(name, kind, srcs, defs, example, opts)
    raise SystemExit(f"side_by_side: {example} has no target {pair.target}")


def prepare_run_dir(pair: Pair, shape: Shape, exe: str) -> str:
    """The run tree npu_run.py makes (the program runs in <run>/output/bin, <run>/output/bin/examples links
    to <run>/examples), with the pair's input files zero-filled (sparse); returns the program's directory."""
    run_dir = os.path.join(os.path.dirname(exe), "run")
    bin_dir = os.path.join(run_dir, "output", "bin")
    os.makedirs(bin_dir, exist_ok=True)
    if not os.path.lexists(os.path.join(bin_dir, "examples")):
        os.symlink(os.path.join("..", "..", "examples"), os.path.join(bin_dir, "examples"))
    for rel, size in (pair.inputs(shape) if pair.inputs else {}).items():
        path = os.path.join(run_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.truncate(size)
    return bin_dir


def run_catlass(pair: Pair, shape: Shape, exe: str, opts) -> dict:
    """One timing-only run of the program, stopped once its launch's record is complete."""
    tag = "_".join(str(x) for x in shape)
    records = os.path.join(opts.records, f"{pair.key}_{tag}.jsonl")
    for f in (records, records + ".log"):
        if os.path.exists(f):
            os.remove(f)
    cwd = prepare_run_dir(pair, shape, exe)
    env = dict(npu_run.model_env(exe), DGA_NPU_MODEL_TIMING=records, DGA_NPU_MODEL_TIMING_ONLY="1")
    args = pair.args(shape)
    start = time.monotonic()
    with open(records + ".log", "w") as log:
        log.write(f"{exe} {' '.join(args)} (in {cwd})\n")
        log.flush()
        proc = subprocess.Popen([exe] + args, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        got, stopped = [], False
        while proc.poll() is None and time.monotonic() - start < opts.timeout:
            got = complete_records(records)
            if got:
                proc.kill()  # the records are all this run is for (see the docstring)
                stopped = True
                break
            time.sleep(0.5)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    got = got or complete_records(records)
    res = {"records": records, "seconds": round(time.monotonic() - start, 1), "stopped_after_launch": stopped,
           "predicted_us": None, "launches": len(got), "error": None}
    if got:
        res["predicted_us"] = sum(r["time_us"] for r in got)
    else:
        res["error"] = (f"no timing record (exit status {proc.returncode}, "
                        f"{'over ' + str(opts.timeout) + ' s' if time.monotonic() - start >= opts.timeout else 'ended'}"
                        f"; log {records}.log)")
    return res


def complete_records(path: str) -> list:
    """The file's records once every line is a complete record (a launch appends its record when it ends)."""
    try:
        with open(path) as fh:
            if not fh.read().endswith("\n"):
                return []
        return ctc.read_records(path)
    except (OSError, ctc.RecordError):
        return []


def run_ours(family: str, shape: Shape) -> dict:
    from deepgemm_ascend.npu_timing.model_run import run_case
    row = run_case(family, shape)
    return {"predicted_us": row["predicted_us"], "flops": row["flops"], "launches": len(row["launches"]),
            "seconds": round(row["wall_s"], 1), "error": row["error"] if row["status"] != "ok" else None}


def catlass_flops(pair: Pair, shape: Shape) -> float:
    if not pair.grouped:
        m, n, k = shape
        return 2.0 * m * n * k
    g, rows, n, k = shape
    return 2.0 * (pair.rows(shape) if pair.rows else g * rows) * n * k


def run_point(pair: Pair, shape: Shape, exe: str, opts) -> dict:
    """Both sides at one shape, at the same time (two processes)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        cat = pool.submit(run_catlass, pair, shape, exe, opts)
        ours = pool.submit(run_ours, pair.family, shape)
        cat, ours = cat.result(), ours.result()
    cat["flops"] = catlass_flops(pair, shape)
    point = {"pair": pair.key, "example": os.path.basename(pair.program), "target": pair.target,
             "family": pair.family, "shape": list(shape), "note": pair.note, "catlass": cat, "ours": ours,
             "ratio": None, "ratio_per_flop": None, "published_us": dict(pair.published).get(shape)}
    if cat["predicted_us"] and ours["predicted_us"]:
        point["ratio"] = ours["predicted_us"] / cat["predicted_us"]
        if ours["flops"]:
            point["ratio_per_flop"] = point["ratio"] * cat["flops"] / ours["flops"]
    return point


def fmt(x, digits=1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def report(points: List[dict]) -> str:
    lines = ["Predicted by our timing model of the Ascend 950 (timing-only runs on the instruction model), not "
             "measured. ratio = ours / CATLASS (below 1: ours predicted faster).", "",
             f"{'pair':<13} {'family':<13} {'shape':<20} {'CATLASS us':>11} {'ours us':>10} {'ratio':>6} "
             f"{'per FLOP':>8} {'CATLASS TF':>10} {'ours TF':>8} {'measured':>9}"]
    for p in points:
        cat, ours = p["catlass"], p["ours"]
        tf = [fmt(s["flops"] / s["predicted_us"] / 1e6 if s["predicted_us"] and s["flops"] else None)
              for s in (cat, ours)]
        lines.append(f"{p['pair']:<13} {p['family']:<13} {','.join(map(str, p['shape'])):<20} "
                     f"{fmt(cat['predicted_us']):>11} {fmt(ours['predicted_us']):>10} {fmt(p['ratio'], 3):>6} "
                     f"{fmt(p['ratio_per_flop'], 3):>8} {tf[0]:>10} {tf[1]:>8} {fmt(p['published_us'], 2):>9}")
        for side in ("catlass", "ours"):
            if p[side]["error"]:
                lines.append(f"    {side}: {p[side]['error']}")
    lines += ["", "measured: Huawei's time of the CATLASS program (CATLASS's documents), where published.",
              "notes:"] + [f"  {k}: {p.note}" for k, p in PAIRS.items() if any(q["pair"] == k for q in points)]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"),
                   help="the project's build directory (libdga_npu_model.so, npu_model_stub/)")
    p.add_argument("--catlass", default=os.path.join(ROOT, "..", "shared", "third_party", "catlass"))
    p.add_argument("--devkit", default=os.path.join(ROOT, "..", "shared", "third_party", "asc-devkit"))
    p.add_argument("--cxx", default=os.environ.get("DGA_NPU_RUN_CXX", "clang++"))
    p.add_argument("--only", nargs="+", choices=sorted(PAIRS), metavar="PAIR", help=f"of {', '.join(PAIRS)}")
    p.add_argument("--shapes", nargs="+", default=["quick"], help="quick, issue, published or shapes (see above)")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per CATLASS run")
    p.add_argument("--records", default="", help="timing records and logs (default <build>/side_by_side)")
    p.add_argument("--json", default="", help="write the results to this file")
    p.add_argument("--list", action="store_true", help="print the pairs and exit")
    opts = p.parse_args(argv)
    if opts.list:
        for k, pair in PAIRS.items():
            print(f"{k:<13} {pair.target} -> {pair.family}\n    {pair.note}")
        return 0
    try:
        specs = parse_shapes(opts.shapes)
    except argparse.ArgumentTypeError as e:
        p.error(str(e))
    opts.build, opts.catlass, opts.devkit = (os.path.abspath(x) for x in (opts.build, opts.catlass, opts.devkit))
    opts.lib = opts.build
    opts.records = os.path.abspath(opts.records or os.path.join(opts.build, "side_by_side"))
    os.makedirs(opts.records, exist_ok=True)
    if not os.path.isfile(os.path.join(opts.lib, "libdga_npu_model.so")):
        p.error(f"no libdga_npu_model.so in {opts.build} (build the project first)")
    points = []
    for key in opts.only or list(PAIRS):
        pair = PAIRS[key]
        shapes = pair_shapes(pair, specs)
        if not shapes:
            continue
        exe = build_program(pair, opts)
        for shape in shapes:
            print(f"side_by_side: {key} at {','.join(map(str, shape))} ...", flush=True)
            points.append(run_point(pair, shape, exe, opts))
    print(report(points))
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump({"timing_only": True, "points": points}, fh, indent=1)
    return 0 if points and all(q["ratio"] is not None for q in points) else 1


if __name__ == "__main__":
    sys.exit(main())
