"""One family's call on the timing model, in a process of its own (`python -m deepgemm_ascend.npu_timing.worker
FAMILY M,N,K REPORT_FILE [TRACE_PREFIX]`): a model error that ends the process (a checker's abort) then
costs only that family. Prints one JSON line last: status, flops, the call's work (bounds.Work), and the wall seconds of building the
inputs and of the call; the launches' reports go to REPORT_FILE."""
import dataclasses
import json
import sys
import time


def run(family: str, shape, report_file: str, trace=None) -> dict:
    from .. import runtime
    from .capture import capture
    from .families import FAMILIES

    runtime.set_backend("npu-model")
    start = time.perf_counter()
    call, work = FAMILIES[family].build(tuple(shape))
    built = time.perf_counter()
    with capture(report_file, timing_only=True, trace=trace):
        call()
    return {"status": "ok", "flops": work.flops, "work": dataclasses.asdict(work), "build_s": built - start, "run_s": time.perf_counter() - built}


def main(argv) -> int:
    family, shape, report_file = argv[0], [int(x) for x in argv[1].split(",")], argv[2]
    trace = argv[3] if len(argv) > 3 else None
    try:
        out = run(family, shape, report_file, trace)
    except Exception as exc:  # noqa: BLE001 - the error is the family's result
        out = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out), flush=True)
    return 0 if out["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
