"""Testing helpers (as upstream deep_gemm.testing): accuracy metric, references, shapes, timing, and
upstream's test utilities (upstream.py)."""
from . import shapes
from .bench import bench_pair
from .numeric import bf16_reference, calc_diff, poison_
from .upstream import (assert_bitwise_equal, bench_kineto, count_bytes, empty_suppress, get_arch_major, ignore_env,
                       suppress_stdout_stderr, test_filter)
