"""One shape generator shared by tests and benchmarks (DeepSeek-V3/V3.2 production shapes plus edge cases)."""

# (N, K) of DeepSeek-V3 dense projections (upstream DeepGEMM's enumerate_normal list).
DEEPSEEK_NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]

LAYOUTS = ("nt", "nn", "tn", "tt")

# Edge cases: M = 0 / 1, tails that are not multiples of 16 / 32 / 128, tiny and skinny problems.
EDGE_MNK = [(0, 64, 64), (1, 1, 1), (1, 7168, 2048), (1, 33, 17), (7, 5, 3), (15, 17, 31), (16, 16, 16),
            (129, 257, 384), (255, 129, 1000), (64, 4096 + 7, 160), (300, 200, 0)]

# Benchmark set of the BF16 GEMM (issue targets: prefill and decode shapes).
BENCH_BF16_MNK = [(4096, 4096, 4096), (2048, 7168, 2048), (4096, 2112, 7168), (4096, 7168, 16384),
                  (128, 7168, 2048), (64, 4096, 7168)]
QUICK_BF16_MNK = [(1024, 1024, 1024), (128, 7168, 2048), (64, 4096, 7168)]

# Benchmark set of the FP8 / FP4 GEMM: three prefill shapes, two decode shapes.
BENCH_FP8_MNK = [(4096, 4096, 4096), (2048, 7168, 2048), (4096, 2112, 7168), (64, 7168, 2048), (128, 7168, 2048)]
QUICK_FP8_MNK = [(1024, 1024, 1024), (64, 7168, 2048)]


def layout_shapes(layout, m, n, k):
    """Storage shapes of A and B for a layout letter pair (upstream convention)."""
    a = (k, m) if layout[0] == "t" else (m, k)
    b = (k, n) if layout[1] == "n" else (n, k)
    return a, b


def make_operands(layout, a_logical, b_logical):
    """Stores logical A [M, K] and B [N, K] as the layout asks (transposed views, no copies of values)."""
    a = a_logical.T.contiguous() if layout[0] == "t" else a_logical
    b = b_logical.T.contiguous() if layout[1] == "n" else b_logical
    return a, b
