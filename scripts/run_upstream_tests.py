#!/usr/bin/env python3
"""Runs DeepGEMM's own test files (tests/*.py of a local deepseek-ai/DeepGEMM checkout) against the installed
deepgemm_ascend on the CPU: `deep_gemm` is deepgemm_ascend, CUDA device requests go to the CPU, and each test
function runs in its own process with a timeout. Prints one verdict line per test and `N passed, M failed`.
Nothing of upstream is copied: its files are read from the checkout at run time.

    python scripts/run_upstream_tests.py ~/DeepGEMM [--files test_bf16.py,test_layout.py] [--scale 8]
        [--timeout 600] [--bench-tests 1] [-k name_substring] [--list]

--scale S divides the large sizes by S (sizes of 1024 and more, rounded up to a multiple of 128): those the test
generators (tests/generators.py, enumerate_*) yield, and the integer literals of 1024 and more that are multiples
of 128 in the test file itself (its inline batch sizes and sequence lengths). bench_kineto
times each case --bench-tests times (upstream's default: 30). A file without
test_* functions (test_lazy_init.py) runs as a script. The exit status is 0 when every test passed.
"""
import argparse
import ast
import os
import subprocess
import sys
import time

DEFAULT_FILES = ("test_bf16.py", "test_fp8_fp4.py", "test_einsum.py", "test_hyperconnection.py", "test_attention.py",
                 "test_layout.py", "test_lazy_init.py")

# Runs in the child: makes `deep_gemm` this package, maps CUDA to the CPU, then runs one test (or the file).
_CHILD = r'''
import os, sys, time, runpy, importlib, types
import torch
import deepgemm_ascend as dg

def alias_modules():
    sys.modules["deep_gemm"] = dg
    for name in list(sys.modules):
        if name.startswith("deepgemm_ascend."):
            sys.modules["deep_gemm." + name[len("deepgemm_ascend."):]] = sys.modules[name]

def cuda_to_cpu():
    from torch.overrides import TorchFunctionMode

    def cpu(dev):
        if isinstance(dev, int) or (isinstance(dev, str) and dev.startswith("cuda")) or \
                (isinstance(dev, torch.device) and dev.type == "cuda"):
            return torch.device("cpu")
        return dev

    class CudaToCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = cpu(kwargs["device"])
            if func in (torch.Tensor.cuda,):
                return args[0]
            if func is torch.Tensor.to:
                args = tuple(cpu(a) if isinstance(a, (str, torch.device)) else a for a in args)
            return func(*args, **kwargs)

    class Event:
        def __init__(self, enable_timing=False, **_):
            self.t = None
        def record(self, *_):
            self.t = time.perf_counter()
        def synchronize(self):
            pass
        def elapsed_time(self, other):
            return (other.t - self.t) * 1e3

    c = torch.cuda
    c.synchronize = lambda *a, **k: None
    c.manual_seed = lambda seed: None
    c.manual_seed_all = lambda seed: None
    c.set_device = lambda *a, **k: None
    c.current_device = lambda: 0
    c.device_count = lambda: 1
    c.Event = Event
    c._sleep = lambda *a, **k: None
    c.empty_cache = lambda: None
    c.reset_peak_memory_stats = lambda *a, **k: None  # no device memory: the statistics are 0
    for stat in ("max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved"):
        setattr(c, stat, lambda *a, **k: 0)
    c.get_device_capability = lambda *a, **k: (dg.testing.get_arch_major(), 0)
    mode = CudaToCpu()
    mode.__enter__()

def shrink(v, scale):
    if scale <= 1 or isinstance(v, bool) or not isinstance(v, int) or v < 1024:
        return v
    return max(128, -(-(v // scale) // 128) * 128)

def scale_generators(scale):
    if scale <= 1:
        return
    try:
        gen = importlib.import_module("generators")
    except ImportError:
        return
    def scaled(fn):
        def wrapper(*a, **k):
            for item in fn(*a, **k):
                yield tuple(shrink(v, scale) for v in item) if isinstance(item, tuple) else shrink(item, scale)
        return wrapper
    for name in dir(gen):
        if name.startswith("enumerate_") and callable(getattr(gen, name)):
            setattr(gen, name, scaled(getattr(gen, name)))

path, func, scale = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, os.path.dirname(path))
os.chdir(os.path.dirname(path))
alias_modules()
cuda_to_cpu()
scale_generators(scale)
if func == "__main__":
    sys.argv = [path]
    runpy.run_path(path, run_name="__main__")
else:
    import ast
    class Shrink(ast.NodeTransformer):  # the test file's own sizes: integer literals >= 1024, multiples of 128
        def visit_Constant(self, node):
            v = node.value
            if isinstance(v, int) and not isinstance(v, bool) and v >= 1024 and v % 128 == 0:
                return ast.copy_location(ast.Constant(shrink(v, scale)), node)
            return node
    with open(path) as f:
        tree = Shrink().visit(ast.parse(f.read(), path))
    mod = types.ModuleType(os.path.basename(path)[:-3])
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    exec(compile(ast.fix_missing_locations(tree), path, "exec"), mod.__dict__)
    getattr(mod, func)()
'''


def test_functions(path):
    """Module-level `def test_*()` functions of a file, in file order."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def run_one(path, func, scale, timeout, bench_tests, tail=1, mqa_cases=0):
    """(verdict, seconds, the failure's last `tail` lines of output)."""
    start = time.monotonic()
    env = dict(os.environ, DGA_BENCH_KINETO_MAX_TESTS=str(bench_tests))
    if mqa_cases > 0:  # upstream's own knob: test_attention.py samples this many MQA cases
        env.setdefault("DG_MQA_NUM_CASES", str(mqa_cases))
    try:
        res = subprocess.run([sys.executable, "-c", _CHILD, path, func, str(scale)], capture_output=True, text=True,
                             timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", time.monotonic() - start, f"over {timeout} s"
    if res.returncode == 0:
        return "PASS", time.monotonic() - start, ""
    lines = [line for line in res.stderr.strip().splitlines() if line.strip()]
    return "FAIL", time.monotonic() - start, "\n".join(lines[-tail:]) if lines else f"exit status {res.returncode}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("deepgemm", help="a local checkout of deepseek-ai/DeepGEMM")
    parser.add_argument("--files", default=",".join(DEFAULT_FILES),
                        help=f"comma-separated test files of tests/ (default: {','.join(DEFAULT_FILES)})")
    parser.add_argument("--scale", type=int, default=1, help="divide the generators' large sizes by this (default 1)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per test function (default 600)")
    parser.add_argument("--bench-tests", type=int, default=1,
                        help="calls bench_kineto times per case (DGA_BENCH_KINETO_MAX_TESTS; upstream: 30; default 1)")
    parser.add_argument("-k", dest="only", default="", help="run the tests whose file::name contains this")
    parser.add_argument("--mqa-cases", type=int, default=4,
                        help="MQA logits cases test_attention.py samples (upstream's DG_MQA_NUM_CASES; 0: all; "
                             "default 4: its torch reference takes about a minute a case on a CPU)")
    parser.add_argument("--tail", type=int, default=1, help="lines of a failure's output to print (default 1)")
    parser.add_argument("--list", action="store_true", help="list the tests and exit")
    args = parser.parse_args(argv)
    tests_dir = os.path.join(os.path.abspath(os.path.expanduser(args.deepgemm)), "tests")
    if not os.path.isdir(tests_dir):
        parser.error(f"deepgemm: no tests/ folder in {args.deepgemm}")
    if args.scale < 1:
        parser.error("--scale: must be >= 1")
    units = []
    for name in filter(None, args.files.split(",")):
        path = os.path.join(tests_dir, name)
        if not os.path.isfile(path):
            parser.error(f"--files: no {name} in {tests_dir}")
        funcs = test_functions(path) or ["__main__"]
        units += [(path, f) for f in funcs if args.only in f"{name}::{f}"]
    if args.list:
        for path, func in units:
            print(f"{os.path.basename(path)}::{func}")
        return 0
    passed = failed = 0
    for path, func in units:
        verdict, seconds, why = run_one(path, func, args.scale, args.timeout, args.bench_tests, max(1, args.tail),
                                        args.mqa_cases)
        passed, failed = passed + (verdict == "PASS"), failed + (verdict != "PASS")
        print(f"{verdict:7} {os.path.basename(path)}::{func} ({seconds:.1f} s){'  ' + why if why else ''}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
