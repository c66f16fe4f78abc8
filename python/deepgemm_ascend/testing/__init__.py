"""Testing helpers (as upstream deep_gemm.testing): accuracy metric, references, shapes, timing."""
from . import shapes
from .bench import bench_pair
from .numeric import bf16_reference, calc_diff, poison_
