"""HyperConnection pre-norm GEMM against a float64 reference. B is used as two bf16 terms, hi = bf16(b) and
lo = bf16(b - hi): 16 significant bits of b (more than TF32's 11), products exact, fp32 accumulation."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff, poison_


def splits_of(k, s):
    blocks = k // 64
    out, first = [], 0
    for i in range(s):
        count = blocks // s + (1 if i < blocks % s else 0)
        out.append((first * 64, (first + count) * 64))
        first += count
    return out


@pytest.mark.parametrize("m", [1, 13, 137])
@pytest.mark.parametrize("n,k", [(8, 1024), (24, 7168), (32, 2048), (128, 1024)])
@pytest.mark.parametrize("num_splits", [None, 3, 16])
def test_matches_tf32_reference(m, n, k, num_splits):
    torch.manual_seed(m + n + k)
    a, b = torch.randn(m, k).bfloat16(), torch.randn(n, k)
    bt = b.double()
    s = num_splits or 1
    d = poison_(torch.empty((s, m, n) if num_splits else (m, n)))
    sq = poison_(torch.empty((s, m) if num_splits else (m,)))
    dg.tf32_hc_prenorm_gemm(a, b, d, sq, num_splits)
    d3, sq2 = d.view(s, m, n), sq.view(s, m)
    for i, (k0, k1) in enumerate(splits_of(k, s)):
        ref = a[:, k0:k1].double() @ bt[:, k0:k1].T
        assert calc_diff(d3[i], ref) < 1e-8
        # |b - (hi + lo)| <= 2^-16 |b|, and fp32 sums of k1 - k0 exact products.
        bound = (2.0 ** -16 + (k1 - k0) * 2.0 ** -24) * (a[:, k0:k1].double().abs() @ bt[:, k0:k1].abs().T)
        assert ((d3[i].double() - ref).abs() <= bound).all()
        assert calc_diff(sq2[i], (a[:, k0:k1].double() ** 2).sum(-1)) < 1e-8
    assert calc_diff(d3.sum(0), a.double() @ bt.T) < 1e-8


def test_more_splits_than_k_blocks_write_zeros():
    # Upstream asserts only num_splits >= 1: a split with no K block writes zeros to its D and sqr_sum.
    torch.manual_seed(5)
    m, n, k, s = 5, 8, 256, 7
    a, b = torch.randn(m, k).bfloat16(), torch.randn(n, k)
    d, sq = poison_(torch.empty(s, m, n)), poison_(torch.empty(s, m))
    dg.tf32_hc_prenorm_gemm(a, b, d, sq, s)
    for i, (k0, k1) in enumerate(splits_of(k, s)):
        if k1 == k0:
            assert (d[i] == 0).all() and (sq[i] == 0).all(), i
        else:
            assert calc_diff(d[i], a[:, k0:k1].double() @ b[:, k0:k1].double().T) < 1e-8
            assert calc_diff(sq[i], (a[:, k0:k1].double() ** 2).sum(-1)) < 1e-8


@pytest.mark.parametrize("value,used", [
    (1.0 + 2.0 ** -12, 1.0 + 2.0 ** -12),            # hi 1, lo 2^-12: kept (TF32 would round to 1)
    (1.0 + 2.0 ** -8 + 2.0 ** -20, 1.0 + 2.0 ** -8),  # hi 1 (tie to even), lo 2^-8: 2^-20 is below lo's 8 bits
    (-3.0 - 2.0 ** -10, -3.0 - 2.0 ** -10),          # hi -3, lo -2^-10
])
def test_b_as_two_bf16_terms(value, used):
    a = torch.ones(1, 64).bfloat16()
    b = torch.full((8, 64), value)
    d, sq = poison_(torch.empty(1, 8)), poison_(torch.empty(1))
    dg.tf32_hc_prenorm_gemm(a, b, d, sq)
    assert torch.equal(d, torch.full((1, 8), 64.0 * used)) and sq.item() == 64.0


def test_errors_leave_outputs_untouched():
    a, b = torch.randn(4, 128).bfloat16(), torch.randn(8, 128)
    d, sq = torch.full((4, 8), 7.0), torch.full((4,), 7.0)
    for exc, pattern, args in [
        (ValueError, r"^b: N must be", (a, torch.randn(12, 128), d, sq)),
        (ValueError, r"^a: K must be", (a[:, :100], b[:, :100], d, sq)),
        (TypeError, r"^b: expected dtype float32", (a, b.bfloat16(), d, sq)),
        (ValueError, r"^d: expected shape", (a, b, torch.full((2, 4, 8), 7.0), sq)),
        (ValueError, r"^num_splits", (a, b, d, sq, 0)),
    ]:
        with pytest.raises(exc, match=pattern):
            dg.tf32_hc_prenorm_gemm(*args)
        assert (d == 7).all() and (sq == 7).all()
