"""Runs a function on N local ranks (processes started by a fork server, with a gloo process group), for
tests and benchmarks of the collective kernels on the host."""
import multiprocessing
import os
import tempfile
import traceback


def _worker(rank, world, init_file, cores_per_rank, fn, args, queue):
    import torch
    import torch.distributed as dist

    from .. import runtime

    try:
        torch.set_num_threads(cores_per_rank)
        runtime.set_num_ai_cores(cores_per_rank)
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
        try:
            result = fn(rank, world, dist.group.WORLD, *args)
        finally:
            dist.destroy_process_group()
        queue.put((rank, True, result))
    except BaseException:  # noqa: BLE001 - reported to the parent
        queue.put((rank, False, traceback.format_exc()))


def run_ranks_outcomes(world, fn, *args, timeout=600, cores_per_rank=None):
    """Runs fn(rank, world, group, *args) on `world` processes (started by a fork server). Returns one
    (ok, value) per rank: (True, result), (False, traceback text), or (False, None) for a rank that exited
    without reporting. fn must be importable (module level); ranks still running after `timeout` seconds are
    killed and reported as RuntimeError."""
    import queue as queue_mod
    import time

    if cores_per_rank is None:
        cores_per_rank = max(1, (os.cpu_count() or 1) // world)
    # A fork server with torch imported once starts each rank in a fraction of a spawn's time (a spawned
    # rank imports torch itself); the ranks are forked from that single-threaded server, not from the caller.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["torch"])
    queue = ctx.Queue()
    outcomes = {}
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        procs = [ctx.Process(target=_worker, args=(r, world, init_file, cores_per_rank, fn, args, queue), daemon=True)
                 for r in range(world)]
        for p in procs:
            p.start()
        deadline = time.monotonic() + timeout
        try:
            while len(outcomes) < world:
                try:
                    rank, ok, value = queue.get(timeout=0.2)
                    outcomes[rank] = (ok, value)
                    continue
                except queue_mod.Empty:
                    pass
                silent = [r for r, p in enumerate(procs) if r not in outcomes and p.exitcode is not None]
                if silent:  # give a result that is still in the pipe a moment to arrive
                    time.sleep(0.5)
                    while not queue.empty():
                        rank, ok, value = queue.get()
                        outcomes[rank] = (ok, value)
                    for r in silent:
                        outcomes.setdefault(r, (False, None))
                if time.monotonic() > deadline:
                    raise RuntimeError(f"ranks {sorted(set(range(world)) - set(outcomes))} did not finish "
                                       f"within {timeout} s")
        finally:
            for p in procs:
                p.join(timeout=10)
                if p.is_alive():
                    p.kill()
                    p.join()
    return [outcomes[r] for r in range(world)]


def run_ranks(world, fn, *args, timeout=600, cores_per_rank=None):
    """As run_ranks_outcomes, but returns the results by rank and raises RuntimeError with the
    first failing rank's traceback."""
    outcomes = run_ranks_outcomes(world, fn, *args, timeout=timeout, cores_per_rank=cores_per_rank)
    failed = [(rank, value or "exited without a result") for rank, (ok, value) in enumerate(outcomes) if not ok]
    if failed:
        # A rank's own error first: the others usually only report that a peer closed the connection.
        secondary = ("by peer", "stopped at barrier")
        rank, text = min(failed, key=lambda f: (any(s in f[1] for s in secondary), f[0]))
        raise RuntimeError(f"rank {rank} failed ({len(failed)} of {world} failed):\n{text}")
    return [value for _, value in outcomes]
