#!/usr/bin/env python3
"""Runs DeepGEMM's own test files (tests/test_*.py of a local deepseek-ai/DeepGEMM checkout) against the installed
deepgemm_ascend on the CPU: `deep_gemm` is deepgemm_ascend, CUDA device requests go to the CPU, and each test
function runs in its own process with a timeout. Prints one verdict line per test and `N passed, M failed`.
Nothing of upstream is copied: its files are read from the checkout at run time.

    python scripts/run_upstream_tests.py ~/DeepGEMM [--files test_bf16.py,test_layout.py] [--scale 8]
        [--timeout 600] [--bench-tests 1] [-k name_substring] [--script-args FILE=ARGS] [--list]

By default every tests/test_*.py of the checkout runs except test_sanitizer.py, which runs the other files
under CUDA's compute-sanitizer (a CUDA tool with no CPU counterpart; see EXCLUDED).

--scale S divides the large sizes by S (sizes of 1024 and more, rounded up to a multiple of 128): those the test
generators (tests/generators.py, enumerate_*) yield, and the integer literals of 1024 and more that are multiples
of 128 in the test file itself (its inline batch sizes and sequence lengths). bench_kineto times each case
--bench-tests times (upstream's default: 30).

A file without test_* functions runs as a script (`python FILE ARGS`, one unit per entry of SCRIPT_UNITS, or
the arguments of --script-args FILE=ARGS, which may be repeated). test_mega_moe.py spawns its ranks with
torch.multiprocessing: every process of a unit gets the same patches through a sitecustomize module on
PYTHONPATH, the ranks meet over gloo at a free MASTER_PORT, and its baseline (DeepEP, TileLang) is stood in for
by scripts/upstream_mega_moe_stand_ins.py, so that its bitwise check of the fused kernel runs (--no-stand-ins:
the test skips that check and only benchmarks). The exit status is 0 when every test passed.
"""
import argparse
import ast
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

SCRIPTS_DIR = os.path.dirname(os.path.abspath(__file__))
STAND_INS = os.path.join(SCRIPTS_DIR, "upstream_mega_moe_stand_ins.py")

# Test files of upstream's tests/ that are not run, with the reason.
EXCLUDED = {
    "test_sanitizer.py": "runs the other test files under CUDA's compute-sanitizer, a CUDA tool with no CPU "
                         "counterpart",
}

# Script files: (label, arguments, a line the output must contain when the stand-ins are on) per unit.
# test_mega_moe.py at sizes this package's Mega MoE accepts (hidden and intermediate multiples of 128, experts
# a multiple of the ranks) that take about a minute on 2 cores; its check compares the fused kernel with the
# baseline bit for bit, twice with fresh inputs, and prints that line when it passed.
_MEGA = ("--num-processes 2 --num-max-tokens-per-rank 64 --hidden 512 --intermediate-hidden 256 --num-experts 8 "
         "--num-topk 2 --masked-ratio 0.1 --num-correctness-tests 2")
_MEGA_CHECKED = "Correctness test #2/2 passed"
SCRIPT_UNITS = {
    "test_mega_moe.py": (("fp8xfp4", f"{_MEGA} --mma-type fp8xfp4", _MEGA_CHECKED),
                         ("bf16xbf16", f"{_MEGA} --mma-type bf16xbf16", _MEGA_CHECKED)),
}

# sitecustomize.py of a unit's processes: loads this file and applies the child patches (a failure stops the
# process, rather than Python's one-line warning and a test that then fails on `import deep_gemm`).
_SITECUSTOMIZE = '''
import importlib.util, os, sys, traceback
try:
    spec = importlib.util.spec_from_file_location("run_upstream_tests", {runner!r})
    runner = importlib.util.module_from_spec(spec)
    sys.modules["run_upstream_tests"] = runner
    spec.loader.exec_module(runner)
    runner.patch_child()
except BaseException:
    traceback.print_exc()
    os._exit(3)
'''


# ------------------------------------------------------------------------------------------------
# The child side: runs in every process of a unit (sitecustomize), before the test's code.

class _DeepGemmAlias:
    """Import hook: `deep_gemm` and `deep_gemm.X` are deepgemm_ascend and deepgemm_ascend.X (the same module
    objects), for submodules imported before or after this is installed."""

    def find_spec(self, name, path=None, target=None):
        import importlib.util
        if name == "deep_gemm" or name.startswith("deep_gemm."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        import importlib
        module = importlib.import_module("deepgemm_ascend" + spec.name[len("deep_gemm"):])
        spec.loader_state = module.__spec__  # the import system sets __spec__ to the alias's spec next
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state  # the module keeps its own spec (importlib.resources)


def _alias_deep_gemm():
    import importlib
    sys.meta_path.insert(0, _DeepGemmAlias())
    try:  # upstream's tests reach deep_gemm.legacy as an attribute of deep_gemm
        importlib.import_module("deepgemm_ascend.legacy")
    except ModuleNotFoundError as e:
        if e.name != "deepgemm_ascend.legacy":
            print(f"run_upstream_tests: deepgemm_ascend.legacy: {e}", file=sys.stderr)
    except Exception as e:  # noqa: BLE001 - only test_legacy.py needs it; its failure shows this line
        print(f"run_upstream_tests: deepgemm_ascend.legacy: {type(e).__name__}: {e}", file=sys.stderr)


class _Event:
    """torch.cuda.Event on the CPU: wall-clock time at record()."""

    def __init__(self, enable_timing=False, **_):
        self.t = None

    def record(self, *_):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


def _cuda_to_cpu():
    """Explicit CUDA devices in torch calls become the CPU (a torch function mode, entered for good), and
    torch.cuda's synchronisation, seeding, events and memory statistics are stood in for."""
    import torch
    from torch.overrides import TorchFunctionMode

    import deepgemm_ascend as dg

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

    c = torch.cuda
    c.synchronize = lambda *a, **k: None
    c.manual_seed = lambda seed: None
    c.manual_seed_all = lambda seed: None
    c.set_device = lambda *a, **k: None
    c.current_device = lambda: 0
    c.device_count = lambda: 1
    c.Event = _Event
    c._sleep = lambda *a, **k: None
    c.empty_cache = lambda: None
    c.reset_peak_memory_stats = lambda *a, **k: None  # no device memory: the statistics are 0
    for stat in ("max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved"):
        setattr(c, stat, lambda *a, **k: 0)
    c.get_device_capability = lambda *a, **k: (dg.testing.get_arch_major(), 0)
    CudaToCpu().__enter__()


def patch_child():
    """The patches every process of a unit gets (called by its sitecustomize)."""
    _alias_deep_gemm()
    _cuda_to_cpu()
    if os.environ.get("DGA_UPSTREAM_STAND_INS") == "1":
        import importlib.util
        spec = importlib.util.spec_from_file_location("upstream_mega_moe_stand_ins", STAND_INS)
        stand_ins = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(stand_ins)
        stand_ins.install()


def _shrink(v, scale):
    if scale <= 1 or isinstance(v, bool) or not isinstance(v, int) or v < 1024:
        return v
    return max(128, -(-(v // scale) // 128) * 128)


def _scale_generators(scale):
    import importlib
    if scale <= 1:
        return
    try:
        gen = importlib.import_module("generators")
    except ImportError:
        return

    def scaled(fn):
        def wrapper(*a, **k):
            for item in fn(*a, **k):
                yield tuple(_shrink(v, scale) for v in item) if isinstance(item, tuple) else _shrink(item, scale)
        return wrapper
    for name in dir(gen):
        if name.startswith("enumerate_") and callable(getattr(gen, name)):
            setattr(gen, name, scaled(getattr(gen, name)))


class _ShrinkLiterals(ast.NodeTransformer):
    """The test file's own sizes: integer literals >= 1024 that are multiples of 128, divided by the scale."""

    def __init__(self, scale):
        self.scale = scale

    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, int) and not isinstance(v, bool) and v >= 1024 and v % 128 == 0:
            return ast.copy_location(ast.Constant(_shrink(v, self.scale)), node)
        return node


def run_test_function(path, func, scale):
    """Child: runs test function `func` of the test file `path`, its sizes divided by `scale`."""
    import types
    scale = int(scale)
    sys.path.insert(0, os.path.dirname(path))
    _scale_generators(scale)
    with open(path) as f:
        tree = _ShrinkLiterals(scale).visit(ast.parse(f.read(), path))
    mod = types.ModuleType(os.path.basename(path)[:-3])
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    exec(compile(ast.fix_missing_locations(tree), path, "exec"), mod.__dict__)
    getattr(mod, func)()


# ------------------------------------------------------------------------------------------------
# The parent side.

class Unit:
    """One process to run: a test function of a file, or the file as a script with arguments."""

    def __init__(self, path, func, args=None, label="", must_print=""):
        self.path, self.func, self.args, self.label, self.must_print = path, func, args, label, must_print

    @property
    def name(self):
        return f"{os.path.basename(self.path)}::{self.func}{f'[{self.label}]' if self.label else ''}"


def default_files(tests_dir):
    """Every tests/test_*.py but the EXCLUDED ones, sorted."""
    return sorted(f for f in os.listdir(tests_dir) if f.startswith("test_") and f.endswith(".py")
                  and f not in EXCLUDED)


def test_functions(path):
    """Module-level `def test_*()` functions of a file, in file order."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def file_units(path, script_args):
    """The units of one file: its test functions, or its script runs (script_args: overrides, or None)."""
    funcs = test_functions(path)
    if funcs:
        return [Unit(path, f) for f in funcs]
    if script_args:
        several = len(script_args) > 1
        return [Unit(path, "__main__", shlex.split(a), str(i + 1) if several else "")
                for i, a in enumerate(script_args)]
    runs = SCRIPT_UNITS.get(os.path.basename(path), (("", "", ""),))
    return [Unit(path, "__main__", shlex.split(a), label, must) for label, a, must in runs]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unit_env(unit, site_dir, opts):
    env = dict(os.environ, DGA_BENCH_KINETO_MAX_TESTS=str(opts.bench_tests),
               PYTHONPATH=os.pathsep.join(filter(None, (site_dir, os.environ.get("PYTHONPATH")))),
               DGA_UPSTREAM_STAND_INS="0" if opts.no_stand_ins else "1",
               # a unit's ranks are processes of this machine, meeting at a port of their own
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE="1", RANK="0")
    if opts.mqa_cases > 0:  # upstream's own knob: test_attention.py samples this many MQA cases
        env.setdefault("DG_MQA_NUM_CASES", str(opts.mqa_cases))
    args = unit.args or []
    if "--num-processes" in args[:-1] and "OMP_NUM_THREADS" not in os.environ:  # the cores shared by the ranks
        ranks = int(args[args.index("--num-processes") + 1])
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // max(1, ranks)))
    return env


def run_one(unit, site_dir, opts):
    """(verdict, seconds, the failure's last opts.tail lines of output)."""
    start = time.monotonic()
    if unit.func == "__main__":
        cmd = [sys.executable, unit.path] + unit.args
    else:  # run_upstream_tests is this file, loaded by the unit's sitecustomize
        cmd = [sys.executable, "-c", "import sys, run_upstream_tests as r; r.run_test_function(*sys.argv[1:])",
               unit.path, unit.func, str(opts.scale)]
    proc = subprocess.Popen(cmd, cwd=os.path.dirname(unit.path), env=_unit_env(unit, site_dir, opts),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the unit's own session: its spawned ranks too
        proc.communicate()
        return "TIMEOUT", time.monotonic() - start, f"over {opts.timeout} s"
    seconds = time.monotonic() - start
    if proc.returncode == 0 and unit.must_print and not opts.no_stand_ins and unit.must_print not in out:
        lines = [line for line in out.strip().splitlines() if line.strip()]
        return "FAIL", seconds, "\n".join([f"no '{unit.must_print}' in the output; it ends:"] + lines[-opts.tail:])
    if proc.returncode == 0:
        return "PASS", seconds, ""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    return "FAIL", seconds, "\n".join(lines[-opts.tail:]) if lines else f"exit status {proc.returncode}"


def _parse_script_args(parser, items):
    """--script-args FILE=ARGS entries -> {file: [args, ...]} in the order given."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.endswith(".py"):
            parser.error(f"--script-args: expected FILE=ARGS (e.g. test_mega_moe.py='--num-processes 2'), got {item!r}")
        out.setdefault(name, []).append(value)
    return out


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=f"Left out by default: "
                                            f"{'; '.join(f'{k} ({v})' for k, v in EXCLUDED.items())}.")
    parser.add_argument("deepgemm", help="a local checkout of deepseek-ai/DeepGEMM")
    parser.add_argument("--files", default="",
                        help="comma-separated test files of tests/ (default: every test_*.py but the excluded)")
    parser.add_argument("--scale", type=int, default=1, help="divide the generators' large sizes by this (default 1)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per test unit (default 600)")
    parser.add_argument("--bench-tests", type=int, default=1,
                        help="calls bench_kineto times per case (DGA_BENCH_KINETO_MAX_TESTS; upstream: 30; default 1)")
    parser.add_argument("-k", dest="only", default="", help="run the tests whose file::name contains this")
    parser.add_argument("--mqa-cases", type=int, default=4,
                        help="MQA logits cases test_attention.py samples (upstream's DG_MQA_NUM_CASES; 0: all; "
                             "default 4: its torch reference takes about a minute a case on a CPU)")
    parser.add_argument("--script-args", action="append", default=[], metavar="FILE=ARGS",
                        help="run script FILE with these arguments instead of its defaults (repeat: one unit "
                             "each); defaults: " + "; ".join(f"{f} {a}" for f, runs in SCRIPT_UNITS.items()
                                                             for _, a, _ in runs))
    parser.add_argument("--no-stand-ins", action="store_true",
                        help="do not stand in for test_mega_moe.py's DeepEP / TileLang baseline")
    parser.add_argument("--tail", type=int, default=1, help="lines of a failure's output to print (default 1)")
    parser.add_argument("--list", action="store_true", help="list the tests and exit")
    return parser


def main(argv=None):
    parser = _parser()
    opts = parser.parse_args(argv)
    tests_dir = os.path.join(os.path.abspath(os.path.expanduser(opts.deepgemm)), "tests")
    if not os.path.isdir(tests_dir):
        parser.error(f"deepgemm: no tests/ folder in {opts.deepgemm}")
    if opts.scale < 1:
        parser.error("--scale: must be >= 1")
    opts.tail = max(1, opts.tail)
    script_args = _parse_script_args(parser, opts.script_args)
    units = []
    for name in filter(None, opts.files.split(",")) if opts.files else default_files(tests_dir):
        path = os.path.join(tests_dir, name)
        if not os.path.isfile(path):
            parser.error(f"--files: no {name} in {tests_dir}")
        units += [u for u in file_units(path, script_args.get(name)) if opts.only in u.name]
    if opts.list:
        for u in units:
            print(u.name + (f"  {shlex.join(u.args)}" if u.args else ""))
        return 0
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="dga_upstream_") as site_dir:
        with open(os.path.join(site_dir, "sitecustomize.py"), "w") as f:
            f.write(_SITECUSTOMIZE.format(runner=os.path.abspath(__file__)))
        for unit in units:
            verdict, seconds, why = run_one(unit, site_dir, opts)
            passed, failed = passed + (verdict == "PASS"), failed + (verdict != "PASS")
            print(f"{verdict:7} {unit.name} ({seconds:.1f} s){'  ' + why if why else ''}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
