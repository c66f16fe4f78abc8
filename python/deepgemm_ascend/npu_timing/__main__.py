"""`python -m deepgemm_ascend.npu_timing FILE [--plot PNG] [--launch N]`: the text report of each launch in
FILE (the model's DGA_NPU_MODEL_TIMING file) or of launch N, and launch N's timeline (default: the first)."""
import argparse
import sys
from typing import Optional, Sequence

from .plot import plot_timeline, require_matplotlib
from .report import format_report, read_reports


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m deepgemm_ascend.npu_timing",
        description="Print the NPU instruction model's timing reports (DGA_NPU_MODEL_TIMING=FILE) and draw the "
                    "traced cores' timeline. The times are predictions of the model, not hardware measurements.")
    parser.add_argument("file", help="the report file, one JSON object per launch")
    parser.add_argument("--launch", type=int, metavar="N", help="only launch N (0 = the first, -1 = the last)")
    parser.add_argument("--plot", metavar="PNG", help="draw the timeline of launch N (default: the first); needs "
                                                     "matplotlib")
    args = parser.parse_args(argv)
    try:
        reports = read_reports(args.file)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not reports:
        print(f"error: {args.file} holds no launch", file=sys.stderr)
        return 2
    chosen = range(len(reports))
    if args.launch is not None:
        if not -len(reports) <= args.launch < len(reports):
            print(f"error: --launch {args.launch}: {args.file} holds {len(reports)} launch(es)", file=sys.stderr)
            return 2
        chosen = [args.launch % len(reports)]
    if args.plot:
        try:
            require_matplotlib()
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print("\n\n".join(format_report(reports[i], i) for i in chosen))
    if args.plot:
        i = chosen[0]
        try:
            plot_timeline(reports[i], args.plot)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {args.plot} (launch {i})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
