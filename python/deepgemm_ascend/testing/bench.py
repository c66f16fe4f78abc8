"""Side-by-side timing against torch in one process."""
import statistics
import time


def bench_pair(fn_a, fn_b, repeats=5, warmups=1):
    """Times two callables interleaved; returns (median_a, median_b) in seconds."""
    for _ in range(warmups):
        fn_a()
        fn_b()
    ta, tb = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn_a()
        t1 = time.perf_counter()
        fn_b()
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
    return statistics.median(ta), statistics.median(tb)


def bench_pair_samples(fn_a, fn_b, repeats=5, warmups=1, min_seconds=0.0, max_repeats=1000):
    """Times two callables interleaved and returns both lists of per-call seconds.

    Runs `warmups` untimed pairs, then at least `repeats` timed pairs, and keeps going (up to
    `max_repeats` pairs) while less than `min_seconds` has been spent in the timed calls, so that
    microsecond-sized problems still get a stable median.
    """
    for _ in range(warmups):
        fn_a()
        fn_b()
    ta, tb = [], []
    while len(ta) < max(repeats, 1) or (sum(ta) + sum(tb) < min_seconds and len(ta) < max_repeats):
        t0 = time.perf_counter()
        fn_a()
        t1 = time.perf_counter()
        fn_b()
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
    return ta, tb
