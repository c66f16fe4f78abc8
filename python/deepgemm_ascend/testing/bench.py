"""Side-by-side timing against torch in one process."""
import statistics
import time


def bench_pair(fn_a, fn_b, repeats=5, warmups=1):
    """Times two callables interleaved; returns (median_a, median_b) in seconds."""
    ta, tb = bench_interleaved_samples([fn_a, fn_b], repeats=repeats, warmups=warmups)
    return statistics.median(ta), statistics.median(tb)


def bench_interleaved_samples(fns, repeats=5, warmups=1, min_seconds=0.0, max_repeats=1000):
    """Times callables round-robin (one call of each per round); returns one list of per-call seconds per callable.

    Runs `warmups` untimed rounds, then at least `repeats` timed rounds, and keeps going (up to
    `max_repeats` rounds) while less than `min_seconds` has been spent in the timed calls, so that
    microsecond-sized problems still get a stable median.
    """
    fns = list(fns)
    for _ in range(warmups):
        for fn in fns:
            fn()
    samples = [[] for _ in fns]
    spent = 0.0
    while len(samples[0]) < max(repeats, 1) or (spent < min_seconds and len(samples[0]) < max_repeats):
        for fn, out in zip(fns, samples):
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            out.append(dt)
            spent += dt
    return samples


def bench_pair_samples(fn_a, fn_b, repeats=5, warmups=1, min_seconds=0.0, max_repeats=1000):
    """Times two callables interleaved and returns both lists of per-call seconds.

    Same rules as `bench_interleaved_samples` (which this calls with the two callables).
    """
    ta, tb = bench_interleaved_samples((fn_a, fn_b), repeats, warmups, min_seconds, max_repeats)
    return ta, tb
