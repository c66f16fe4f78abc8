"""Small helpers shared with upstream DeepGEMM's deep_gemm.utils."""


def ceil_div(x, y):
    return (x + y - 1) // y


def align(x, y):
    return ceil_div(x, y) * y
