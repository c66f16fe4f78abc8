"""Command line interface: `deepgemm-ascend info`, `deepgemm-ascend bench` and `deepgemm-ascend model`.

Also reachable as `python -m deepgemm_ascend`. Exit codes: 0 success, 1 a benchmark case failed
its accuracy check (or raised) or a `model` call failed on the model, 2 bad usage (unknown kernel,
malformed --shapes, missing matplotlib for --plot, ...).

OpenMP: the host backend runs its cores on the process's OpenMP threads (torch's), so `bench` runs
under whatever OMP_WAIT_POLICY the environment has (default: unset) and records it.
"""
import argparse
import json
import os
import sys
from typing import List, Optional, Sequence

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
BUSY_WARNING = 0.25  # warn when more than this fraction of the CPUs is busy before a run


def _parse_shapes(text: str, counts=(3,)):
    """'M,N,K;M,N,K' -> [(M, N, K), ...] of non-negative ints; entries of any length in `counts`."""
    shapes = []
    for part in text.replace(" ", "").split(";"):
        if not part:
            continue
        fields = part.lower().replace("x", ",").split(",")
        try:
            dims = tuple(int(f) for f in fields)
        except ValueError:
            dims = ()
        if len(dims) not in counts or min(dims) < 0:
            what = " or ".join(f"{n} non-negative integers" for n in counts)
            raise argparse.ArgumentTypeError(f"bad shape {part!r}: expected {what} (M,N,K)")
        shapes.append(dims)
    if not shapes:
        raise argparse.ArgumentTypeError("no shape given: expected 'M,N,K;M,N,K'")
    return shapes


def _parse_list(text: str) -> List[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _int_at_least(lo: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be >= {lo}, got {value}")
        return value

    return parse


def _parse_recipes(text: str) -> List[str]:
    from .bench.fp8 import RECIPES

    names = _parse_list(text)
    bad = [n for n in names if n not in RECIPES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown recipe(s) {', '.join(bad) or '(none given)'}; "
                                         f"choose from {', '.join(RECIPES)}")
    return names


def build_parser() -> argparse.ArgumentParser:
    from .bench import available_kernels
    from .testing.shapes import LAYOUTS

    from . import _C

    parser = argparse.ArgumentParser(
        prog="deepgemm-ascend",
        description="deepgemm-ascend: build information, benchmarks against torch and the Ascend 950 timing model's "
                    "predictions.")
    parser.add_argument("--version", action="version", version=f"deepgemm-ascend {_C.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    info = sub.add_parser("info", help="version, backends, CPU features, host ISA, AI cores",
                          description="Print how deepgemm_ascend was built and what it runs on.")
    info.add_argument("--json", action="store_true", help="print the same information as JSON")

    bench = sub.add_parser(
        "bench", help="check and time kernels against torch on the default device",
        description="Check every case against a float64 torch reference (FAIL if calc_diff > 1e-5 for bf16, > 1e-3 "
                    "for fp8) and time it against torch in the same process, interleaved (median of the timed runs). "
                    "fp8 is timed against torch dequantise + matmul, torch.matmul in bf16 and our bf16 GEMM.")
    bench.add_argument("--kernels", default="bf16", type=_parse_list,
                       help=f"comma-separated kernel families (available: {', '.join(available_kernels())}; "
                            "default: bf16)")
    shapes = bench.add_mutually_exclusive_group()
    shapes.add_argument("--shapes", type=_parse_shapes, metavar='"M,N,K;M,N,K"',
                        help="explicit shapes (default: the kernel's benchmark set; moe reads M as routed rows "
                             "over 32 experts; mega_moe reads T,H,I: tokens per rank, hidden, intermediate)")
    shapes.add_argument("--quick", action="store_true", help="the kernel's small quick set")
    bench.add_argument("--layouts", default=["nt"], type=_parse_list,
                       help=f"comma-separated layouts out of {','.join(LAYOUTS)} (default: nt)")
    bench.add_argument("--recipes", default=["block"], type=_parse_recipes,
                       help="comma-separated scale recipes of the fp8 kernels: block = (1,128,128) fp32 scales, "
                            "mx = (1,1,32) UE8M0, fp8xfp4 = FP8 A (1,128) x FP4 B (1,32) UE8M0 (default: block)")
    bench.add_argument("--ranks", default=8, type=_int_at_least(1),
                       help="ranks (local processes) of the collective kernels: mega_moe (default: 8)")
    bench.add_argument("--out-dtype", default="bf16", choices=["bf16", "fp32"], help="output dtype (default: bf16)")
    bench.add_argument("--repeat", default=5, type=_int_at_least(1),
                       help="minimum timed runs per implementation; the median is reported (default: 5)")
    bench.add_argument("--warmup", default=1, type=_int_at_least(0), help="untimed runs first (default: 1)")
    bench.add_argument("--min-time", default=0.2, type=float, metavar="SECONDS",
                       help="keep timing small problems until this long was spent (default: 0.2)")
    bench.add_argument("--seed", default=0, type=int, help="seed of the random operands (default: 0)")
    bench.add_argument("--json", nargs="?", const="-", metavar="FILE",
                       help="write machine info, command line and results as JSON to FILE ('-' or nothing: stdout; "
                            "the table then goes to stderr)")
    bench.add_argument("--plot", metavar="FILE.png", help="bar chart of TFLOPS, ours vs torch (needs matplotlib)")
    bench.add_argument("--no-progress", action="store_true",
                       help="no progress bar; print one line per finished case to stderr instead")
    from .npu_timing.families import FAMILIES

    model = sub.add_parser(
        "model", help="predict our NPU kernels' time on the Ascend 950 timing model (no device needed)",
        description="Run our NPU kernels through the public API on the instruction model's timing mode "
                    "(npu-model backend, DGA_NPU_MODEL_TIMING_ONLY: the arithmetic is skipped, only timed), with "
                    "their real tile configs and launches, one call per family and shape in a process of its own. "
                    "Prints per call the predicted time (summed over its launches), TFLOPS, the launches, the "
                    "critical pipe, the fraction of its bound (Mega MoE: without its communication launches, "
                    "reported apart) and DeepGEMM-Ascend's published 950DT figures where they exist. These are "
                    "predictions of our timing model (950PR constants from the devkit docs), not measurements. "
                    "Needs the npu-model backend (built with the AscendC devkit).",
        epilog="families and their default shapes: " + "; ".join(
            f"{f.name} {','.join(map(str, f.default))} ({f.shape_meaning})" for f in FAMILIES.values()))
    model.add_argument("--family", type=_parse_list, default=list(FAMILIES), metavar="NAMES",
                       help=f"comma-separated families (default: all: {', '.join(FAMILIES)})")
    model.add_argument("--shapes", type=lambda t: _parse_shapes(t, (3, 4)), metavar='"M,N,K;M,N,K"',
                       help="shapes run for every chosen family whose shape has as many numbers, read as the "
                            "family's numbers (see below; default: the family's production shape)")
    model.add_argument("--targets", action="store_true",
                       help="run the speed targets (npu_timing/targets.py) of the chosen families instead: each "
                            "case's fraction of its bound against its goal")
    model.add_argument("--report", action="store_true", help="also print the full timing report of every launch")
    model.add_argument("--plot", metavar="FILE.png",
                       help="timeline of the traced cores' pipes of the first family's longest launch (needs "
                            "matplotlib)")
    model.add_argument("--trace", metavar="PREFIX",
                       help="the traced cores (DGA_NPU_MODEL_TRACE, e.g. 'core 5' or 'group 3'; default: the first "
                            "core's group)")
    model.add_argument("--json", metavar="FILE", help="write the rows (with each launch's summary) as JSON to FILE")
    parser.bench_parser = bench  # for errors that name the subcommand
    return parser


def _info_dict() -> dict:
    import torch

    from . import runtime

    out = dict(runtime.info())
    out["torch"] = torch.__version__
    return out


def format_info(d: dict) -> str:
    """Human-readable `info` output."""
    yes_no = {True: "yes", False: "no"}
    features = d.get("cpu_features") or []
    isas = d.get("host_isas") or []
    lines = [
        ("version", d.get("version")),
        ("backends", ", ".join(d.get("backends") or []) or "none"),
        ("CPU tensors run on", d.get("backend")),
        ("npu-model library", d.get("npu_model")),
        ("CANN found", yes_no.get(d.get("cann"), d.get("cann"))),
        ("CPU vendor", d.get("cpu_vendor")),
        ("CPU features", " ".join(features) or "none detected"),
        ("host ISA", f"{d.get('host_isa')} (available: {', '.join(isas)})"),
    ]
    if d.get("avx512_fma_gain") is not None:
        lines.append(("AVX-512F FMA loop", f"{d['avx512_fma_gain']:.2f}x AVX2's (avx512 is the default from "
                                            f"{d.get('avx512_min_fma_gain', 0):.2f}x)"))
    lines += [
        ("AI cores", f"{d.get('ai_cores')} used / {d.get('max_ai_cores')} max"),
        ("host threads", "the process's OpenMP threads" if d.get("host_threads") == "openmp" else "the library's own"),
        ("checked mode", "on" if d.get("checked") else "off"),
        ("torch", d.get("torch")),
    ]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k + ':':<{width + 1}} {v}" for k, v in lines)


def cmd_info(args) -> int:
    d = _info_dict()
    print(json.dumps(d, indent=2) if args.json else format_info(d))
    return EXIT_OK


def cmd_model(args, parser) -> int:
    from . import runtime
    from .npu_timing import format_report, model_run, targets
    from .npu_timing.families import FAMILIES
    from .npu_timing.plot import plot_timeline, require_matplotlib

    bad = [f for f in args.family if f not in FAMILIES]
    if bad or not args.family:
        parser.error(f"unknown family(ies) {', '.join(bad) or '(none)'}; choose from {', '.join(FAMILIES)}")
    if "npu-model" not in runtime.info().get("backends", ()):
        print("deepgemm-ascend model: error: needs the npu-model backend (libdga_npu_model, built when the AscendC "
              "devkit is found); this build has none", file=sys.stderr)
        return EXIT_USAGE
    if args.plot:
        try:
            require_matplotlib()
        except RuntimeError as exc:
            print(f"deepgemm-ascend model: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    for path, what in ((args.plot, "--plot"), (args.json, "--json")):
        problem = path and _check_writable(path, what)
        if problem:
            print(f"deepgemm-ascend model: error: {problem}", file=sys.stderr)
            return EXIT_USAGE

    progress = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    if args.targets:
        chosen = targets.select(args.family)
        rows = model_run.run_cases([(t.family, t.shape) for t in chosen], args.trace, progress)
        for r, t in zip(rows, chosen):
            r["target"] = targets.verdict(r, t.goal)
    else:
        rows = model_run.run_model(args.family, args.shapes, args.trace, progress)
    print(model_run.format_rows(rows))
    if args.targets:
        print("\n" + targets.format_verdicts(rows))
    if args.report:
        for r in rows:
            for i, rep in enumerate(r["reports"]):
                print(f"\n{r['family']} {'x'.join(map(str, r['shape']))}, " + format_report(rep, i))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"note": model_run.HEADER, "published_note": model_run.PUBLISHED_NOTE,
                       "rows": model_run.json_rows(rows)}, f, indent=2)
        print(f"wrote {args.json}")
    if args.plot:
        chosen = model_run.plot_launch(rows)
        if chosen is None:
            print("deepgemm-ascend model: error: --plot: no family made a launch", file=sys.stderr)
            return EXIT_FAIL
        row, rep = chosen
        plot_timeline(rep, args.plot, title=f"{row['family']} {'x'.join(map(str, row['shape']))}: {rep['kernel']}, "
                                            f"{rep['time_us']:.1f} us predicted by our timing model")
        print(f"wrote {args.plot} ({row['family']}: {rep['kernel']})")
    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        print(f"{len(failed)} call(s) failed: " + ", ".join(r["family"] for r in failed), file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def _check_writable(path: str, what: str) -> Optional[str]:
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"{what}: directory {parent} does not exist"
    return None


def cmd_bench(args, parser: argparse.ArgumentParser, argv: Sequence[str]) -> int:
    import dataclasses

    from . import bench, runtime
    from .bench import report

    try:
        kernels = bench.resolve_kernels(args.kernels)
    except ValueError as exc:
        parser.error(str(exc))
    if args.plot:
        try:
            report.require_matplotlib()
        except RuntimeError as exc:
            print(f"deepgemm-ascend bench: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    for path, what in ((args.plot, "--plot"), (args.json if args.json != "-" else None, "--json")):
        problem = path and _check_writable(path, what)
        if problem:
            print(f"deepgemm-ascend bench: error: {problem}", file=sys.stderr)
            return EXIT_USAGE

    options = bench.BenchOptions(shapes=args.shapes, quick=args.quick, layouts=tuple(args.layouts),
                                 out_dtype=args.out_dtype, recipes=tuple(args.recipes), ranks=args.ranks,
                                 repeat=args.repeat,
                                 warmup=args.warmup, min_time=args.min_time, device=bench.default_device(),
                                 seed=args.seed)
    try:
        bench.plan(kernels, options)
    except ValueError as exc:
        parser.error(str(exc))

    # With JSON on stdout, everything human-readable goes to stderr.
    out = sys.stderr if args.json == "-" else sys.stdout
    machine = bench.machine_info()
    busy = bench.cpu_busy_fraction()
    machine["cpu_busy_before_run"] = busy
    machine["omp_wait_policy"] = os.environ.get("OMP_WAIT_POLICY", "")
    if busy is not None and busy > BUSY_WARNING:
        print(f"warning: {busy:.0%} of the CPUs were busy before the run: other processes will distort the timings "
              "(torch's OpenMP threads are especially sensitive); benchmark on an idle machine", file=sys.stderr)
    print(f"deepgemm-ascend {machine.get('version')} on {options.device} ({machine.get('cpu_model')}): "
          f"host ISA {machine.get('host_isa')}, {machine.get('ai_cores')} AI core(s) on {machine.get('host_threads')} "
          f"threads; torch {machine.get('torch')} "
          f"with {max(1, runtime.get_num_ai_cores())} thread(s), OMP_WAIT_POLICY={machine['omp_wait_policy'] or 'unset'}",
          file=out, flush=True)
    peak = None
    if options.device == "cpu":  # the fraction of this machine's measured peak, per case
        peak = runtime.measure_host_peak()
        print(f"measured peak: {peak['tflops']:.3f} TFLOPS ({peak['isa']} instruction loop on registers, "
              f"{peak['cores']} core(s))", file=out, flush=True)
    rows = bench.run_bench(kernels, options, progress="lines" if args.no_progress else "auto", stream=sys.stderr)
    if peak:
        # Measured again after the cases, the better of the two: a busy moment can only lower a measurement.
        after = runtime.measure_host_peak()
        if after["tflops"] > peak["tflops"]:
            print(f"measured peak after the cases: {after['tflops']:.3f} TFLOPS (used for 'of peak')", file=out)
            peak = after
        machine["measured_peak"] = peak
        bench.set_peak_fractions(rows, peak["tflops"])
    machine["torch_threads"] = max(1, runtime.get_num_ai_cores())  # what run_bench used
    print(report.format_table(rows), file=out, flush=True)

    if args.json:
        doc = report.json_document(rows, machine, ["deepgemm-ascend"] + list(argv), options=dataclasses.asdict(options))
        text = report.dumps(doc)
        if args.json == "-":
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
            print(f"wrote {args.json}", file=out)
    if args.plot:
        report.plot_tflops(rows, args.plot)
        print(f"wrote {args.plot}", file=out)

    failed = [r for r in rows if r.get("status") != "ok"]
    if failed:
        print(f"{len(failed)} case(s) failed: " + ", ".join(f"{r.get('kernel')} {r.get('label')} ({r.get('status')})"
                                                          for r in failed), file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the `deepgemm-ascend` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "info":
        return cmd_info(args)
    if args.command == "model":
        return cmd_model(args, parser)
    return cmd_bench(args, parser.bench_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
