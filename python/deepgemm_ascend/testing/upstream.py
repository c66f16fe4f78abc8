"""Upstream deep_gemm.testing helpers with their meaning on this platform: byte counts, a bitwise equality
assertion naming the first differing byte, test filters, environment masking, the architecture major the
numerics follow, and a profiler-based timer (bench_kineto) for CPU and NPU."""
import functools
import os
import sys
import time

import torch

# The DeepGEMM generation whose numerics this package follows on every device: SM100's (UE8M0 scales per
# 32 or 128 K values, FP4 operands, 1D1D promotion), which the 950's MX cube shares. Upstream's tests use it
# to pick their recipes.
ARCH_MAJOR = 10


def get_arch_major():
    """10: see ARCH_MAJOR (upstream: the CUDA device's compute capability major)."""
    return ARCH_MAJOR


def count_bytes(*tensors):
    """Bytes of the tensors (nested tuples and lists counted, None skipped)."""
    total = 0
    for t in tensors:
        if isinstance(t, (tuple, list)):
            total += count_bytes(*t)
        elif t is not None:
            total += t.numel() * t.element_size()
    return total


def assert_bitwise_equal(x, y, label=""):
    """AssertionError naming the first differing byte (its element, coordinate and both values) unless
    x and y have equal shapes, dtypes and bytes."""
    assert x.shape == y.shape, f"shape mismatch{f' ({label})' if label else ''}: {tuple(x.shape)} vs {tuple(y.shape)}"
    assert x.dtype == y.dtype, f"dtype mismatch{f' ({label})' if label else ''}: {x.dtype} vs {y.dtype}"
    xb, yb = x.contiguous().view(torch.uint8).flatten(), y.contiguous().view(torch.uint8).flatten()
    if torch.equal(xb, yb):
        return
    diff = (xb != yb).nonzero()
    first = int(diff[0])
    elem = first // x.element_size()
    coord = tuple(int(v) for v in torch.unravel_index(torch.tensor(elem), tuple(x.shape))) if x.dim() else ()
    raise AssertionError(
        f"bitwise mismatch{f' ({label})' if label else ''}: {diff.numel()} of {xb.numel()} bytes differ; first "
        f"byte {first} (element {elem} at {coord}, byte {first % x.element_size()}): {int(xb[first])} vs "
        f"{int(yb[first])}, values {x.flatten()[elem].item()} vs {y.flatten()[elem].item()}")


def test_filter(condition):
    """Decorator: runs the test only when condition() is true, else prints that it was filtered."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if condition():
                return func(*args, **kwargs)
            print(f"{func.__name__}:\n > Filtered by {condition}\n")
        return wrapper
    return decorator


test_filter.__test__ = False  # not a pytest test itself


def ignore_env(name, condition):
    """Decorator: while the function runs, environment variable `name` is unset when condition() is true
    (restored afterwards, also on error)."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if not condition():
                return func(*args, **kwargs)
            saved = os.environ.pop(name, None)
            try:
                return func(*args, **kwargs)
            finally:
                if saved is not None:
                    os.environ[name] = saved
        return wrapper
    return decorator


class empty_suppress:
    """A context manager that does nothing (upstream's counterpart of suppress_stdout_stderr)."""

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False


class suppress_stdout_stderr:
    """Redirects file descriptors 1 and 2 (and sys.stdout / sys.stderr) to /dev/null inside the block."""

    def __enter__(self):
        self._null = open(os.devnull, "w")
        sys.stdout.flush()
        sys.stderr.flush()
        self._saved = (os.dup(1), os.dup(2), sys.stdout, sys.stderr)
        os.dup2(self._null.fileno(), 1)
        os.dup2(self._null.fileno(), 2)
        sys.stdout = sys.stderr = self._null
        return self

    def __exit__(self, *_):
        out, err, sys.stdout, sys.stderr = self._saved
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        self._null.close()
        return False


_OP_PREFIX = "deepgemm_ascend::"


def _event_seconds(event):
    """Self plus children time of a profiler event on its device (NPU time when recorded, else CPU)."""
    for attr in ("device_time_total", "self_device_time_total"):
        us = getattr(event, attr, 0) or 0
        if us > 0:
            return us / 1e6
    return event.cpu_time_total / 1e6


def bench_kineto(fn, kernel_names, num_tests=30, suppress_kineto_output=False, trace_path=None, flush_l2=True,
                 with_multiple_kernels=False, barrier=None):
    """Seconds per call of the kernels named by `kernel_names` (a str, or a tuple: one time each) while
    fn() runs num_tests times under the torch profiler (CPU activity, and NPU activity when torch_npu is
    loaded). A name matches this package's ops (torch.ops.deepgemm_ascend.*, shown as
    'deepgemm_ascend::<op>') whose name contains it; a name matching none of them times every op of this
    package that fn() ran; with none at all, fn()'s wall time per call. flush_l2 and barrier are
    accepted: there is no L2 to flush on the host, and a barrier() is called before each call when given.
    DGA_BENCH_KINETO_MAX_TESTS (a positive int) caps num_tests: upstream's tests time every case this way
    (scripts/run_upstream_tests.py sets it).
    """
    assert isinstance(kernel_names, (str, tuple)), "kernel_names: a str or a tuple of str"
    cap = os.environ.get("DGA_BENCH_KINETO_MAX_TESTS", "")
    if cap.isdigit() and int(cap) > 0:
        num_tests = min(num_tests, int(cap))
    names = (kernel_names,) if isinstance(kernel_names, str) else kernel_names
    fn()  # first-use work (JIT, allocation) outside the measurement
    activities = [torch.profiler.ProfilerActivity.CPU]
    npu_activity = getattr(torch.profiler.ProfilerActivity, "PrivateUse1", None)
    if hasattr(torch, "npu") and npu_activity is not None:
        activities.append(npu_activity)
    suppress = suppress_stdout_stderr if suppress_kineto_output else empty_suppress
    with suppress():
        start = time.perf_counter()
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(num_tests):
                if barrier is not None:
                    barrier()
                fn()
            if hasattr(torch, "npu"):
                torch.npu.synchronize()
        wall = (time.perf_counter() - start) / num_tests
    if trace_path is not None:
        prof.export_chrome_trace(trace_path)
    ours = [e for e in prof.key_averages() if e.key.startswith(_OP_PREFIX)]
    times = []
    for name in names:
        matched = [e for e in ours if name in e.key[len(_OP_PREFIX):]] or ours
        if not with_multiple_kernels and len([e for e in ours if name in e.key]) > 1:
            raise AssertionError(f"bench_kineto: '{name}' matches several ops: {[e.key for e in ours]}")
        total = sum(_event_seconds(e) for e in matched)
        times.append(total / num_tests if matched else wall)
    return tuple(times) if isinstance(kernel_names, tuple) else times[0]
