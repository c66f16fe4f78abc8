"""BF16 dense GEMMs against a float64 torch reference."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff, poison_
from deepgemm_ascend.testing.shapes import EDGE_MNK, LAYOUTS, make_operands

FUNCS = {"nt": dg.bf16_gemm_nt, "nn": dg.bf16_gemm_nn, "tn": dg.bf16_gemm_tn, "tt": dg.bf16_gemm_tt}
OUT_DTYPES = [torch.bfloat16, torch.float32]


def check(d, ref, k):
    """calc_diff < 1e-5 plus a K-dependent elementwise bound (half an output ulp + fp32 accumulation)."""
    got = d.double()
    assert not torch.isnan(got).any(), "unwritten (poisoned) or NaN entries in D"
    assert calc_diff(got, ref) < 1e-5
    rtol = 2.0 ** -8 if d.dtype == torch.bfloat16 else 1e-6
    tol = rtol * ref.abs() + 2e-6 * max(k, 1) + 1e-6
    err = (got - ref).abs()
    bad = err > tol
    assert not bad.any(), f"{int(bad.sum())} elements off; worst {float(err.max()):.3g} at {tuple(int(i) for i in (err == err.max()).nonzero()[0])}"


class Problem:
    """Logical A [M, K], B [N, K], C [M, N] and their float64 product, computed once per shape."""

    def __init__(self, m, n, k):
        self.m, self.n, self.k = m, n, k
        self.a = torch.randn(m, k).bfloat16()
        self.b = torch.randn(n, k).bfloat16()
        self.c32 = torch.randn(m, n) * 32
        self.ab = self.a.double() @ self.b.double().T

    def c(self, dtype):
        return self.c32.to(dtype)

    def run(self, layout, out_dtype, with_c):
        a, b = make_operands(layout, self.a, self.b)
        d = poison_(torch.empty(self.m, self.n, dtype=out_dtype))
        c = self.c(out_dtype) if with_c else None
        FUNCS[layout](a, b, d, c)
        ref = self.ab + (c.double() if with_c else 0)
        check(d, ref, self.k)


@pytest.fixture(scope="module")
def problems():
    cache = {}

    def get(m, n, k):
        if (m, n, k) not in cache:
            torch.manual_seed(m * 7 + n * 13 + k)
            cache[(m, n, k)] = Problem(m, n, k)
        return cache[(m, n, k)]

    return get


ACCEPTANCE = [(1, 7168, 2048), (129, 257, 384), (4096, 2112, 7168)]


@pytest.mark.parametrize("shape", ACCEPTANCE, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=["bf16", "fp32"])
@pytest.mark.parametrize("with_c", [False, True], ids=["noC", "C"])
def test_acceptance_shapes(problems, shape, layout, out_dtype, with_c):
    problems(*shape).run(layout, out_dtype, with_c)


@pytest.mark.parametrize("shape", [s for s in EDGE_MNK if 0 not in s], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=["bf16", "fp32"])
def test_edge_shapes(problems, shape, layout, out_dtype):
    problems(*shape).run(layout, out_dtype, with_c=shape[0] % 2 == 1)


@pytest.mark.parametrize("n,k", [(2112, 7168), (576, 7168), (7168, 2048), (4096, 7168)])
@pytest.mark.parametrize("m", [1, 128])
def test_deepseek_decode_shapes(problems, m, n, k):
    problems(m, n, k).run("nt", torch.bfloat16, with_c=False)


def test_m_or_n_zero_is_a_no_op():
    for m, n in [(0, 8), (8, 0)]:
        d = torch.full((m, n), 3.0)
        dg.bf16_gemm_nt(torch.randn(m, 16).bfloat16(), torch.randn(n, 16).bfloat16(), d)
        assert (d == 3.0).all()


@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=["bf16", "fp32"])
def test_k_zero_writes_c_or_zeros(out_dtype):
    a, b = torch.empty(5, 0, dtype=torch.bfloat16), torch.empty(7, 0, dtype=torch.bfloat16)
    d = poison_(torch.empty(5, 7, dtype=out_dtype))
    dg.bf16_gemm_nt(a, b, d)
    assert (d == 0).all()
    c = torch.randn(5, 7).to(out_dtype)
    dg.bf16_gemm_nt(a, b, d, c)
    assert torch.equal(d, c)


@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=["bf16", "fp32"])
def test_accumulate_in_place(problems, out_dtype):
    p = problems(130, 70, 200)
    d = p.c(out_dtype)
    start = d.double().clone()
    dg.bf16_gemm_nt(p.a, p.b, d, d)
    check(d, p.ab + start, p.k)


def test_strided_views_and_storage_offsets(problems):
    p = problems(100, 90, 150)
    a_big = torch.randn(120, 300).bfloat16()
    a_big[7:107, 11:161] = p.a
    a = a_big[7:107, 11:161]                        # row stride 300, storage offset
    b = p.b.T.contiguous().T                        # B [N, K] stored column-major (MN-major)
    assert a.storage_offset() > 0 and b.stride() == (1, 90)
    d_big = poison_(torch.empty(110, 200))
    d = d_big[3:103, 50:140]                        # row stride 200
    dg.bf16_gemm_nt(a, b, d)
    check(d, p.ab, p.k)
    outside = d_big.clone()
    outside[3:103, 50:140] = 0
    assert torch.isnan(outside).sum() == d_big.numel() - d.numel(), "wrote outside the D view"


def test_deterministic_and_core_count_independent(problems):
    p = problems(300, 260, 500)
    outs = []
    for cores in (1, 0, 1, 0):
        dg.set_num_ai_cores(cores)
        d = poison_(torch.empty(300, 260))
        dg.bf16_gemm_nt(p.a, p.b, d)
        outs.append(d)
    dg.set_num_ai_cores(0)
    assert all(torch.equal(outs[0], o) for o in outs[1:])


def test_every_host_isa(problems):
    p = problems(70, 90, 300)
    try:
        for isa in dg.info()["host_isas"]:
            dg.set_host_isa(isa)
            d = poison_(torch.empty(70, 90))
            dg.bf16_gemm_nt(p.a, p.b, d)
            check(d, p.ab, p.k)
    finally:
        dg.set_host_isa(None)
