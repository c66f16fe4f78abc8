"""deepgemm_ascend.legacy (upstream's deep_gemm.legacy BF16 grouped GEMMs) against float64 references: row
gathers with negative indices, K ranges that are not multiples of a block, empty groups, accumulation."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.runtime import on_npu_kernels
from deepgemm_ascend.testing import calc_diff, poison_

ALIGN = 128
N, K = 96, 160


def ids_of(sizes):
    ids = []
    for g, s in enumerate(sizes):
        ids += [g] * s + [-1] * (-(-s // ALIGN) * ALIGN - s)
    return torch.tensor(ids, dtype=torch.int32)


def bf16_close(got, want):
    assert calc_diff(got, want) < 1e-5
    assert torch.all((got.double() - want).abs() <= want.abs() * 2 ** -7 + 1e-2)


@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("fused", [False, True])
def test_m_grouped_contiguous_tl(layout, fused):
    sizes = [130, 0, 5]
    ids = ids_of(sizes)
    m = ids.numel()
    b = torch.randn(len(sizes), N, K).bfloat16()
    if fused:
        a = torch.randn(37, K).bfloat16()  # fewer rows than D: gathered, some twice, some -1
        rows = torch.randint(-1, a.size(0), (m,), dtype=torch.int32)
        a_rows = torch.where(rows[:, None] >= 0, a[rows.clamp(min=0).long()].double(), torch.zeros(m, K).double())
    else:
        a = torch.randn(m, K).bfloat16()
        a_rows = a.double()
    d = poison_(torch.empty(m, N, dtype=torch.bfloat16))
    bb = b if layout == "nt" else b.transpose(1, 2).contiguous()
    if fused:
        fn = getattr(dg.legacy, f"a_fused_m_grouped_bf16_gemm_{layout}_contiguous_tl")
        if on_npu_kernels(a):
            with pytest.raises(NotImplementedError, match="^m_row_indices: .*no NPU kernel"):
                fn(a, bb, d, (ids, rows))
            return
        fn(a, bb, d, (ids, rows))
    else:
        getattr(dg.legacy, f"m_grouped_bf16_gemm_{layout}_contiguous_tl")(a, bb, d, ids)
    valid = ids >= 0
    assert (d[~valid].float() == 0).all(), "rows with id -1 are zero"
    for g in range(len(sizes)):
        sel = ids == g
        if sel.any():
            bf16_close(d[sel], a_rows[sel] @ b[g].double().T)


def test_m_grouped_fused_validates_the_row_table():
    ids, a, b = ids_of([3]), torch.randn(8, K).bfloat16(), torch.randn(1, N, K).bfloat16()
    d = poison_(torch.empty(ALIGN, N, dtype=torch.bfloat16))
    rows = torch.zeros(ALIGN, dtype=torch.int32)
    rows[7] = 8
    with pytest.raises(ValueError, match=r"^m_row_indices: row 7 gathers row 8 of a"):
        dg.legacy.a_fused_m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, (ids, rows))
    with pytest.raises(ValueError, match="^m_indices: 100 rows are not a multiple"):
        dg.legacy.m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d[:100], ids[:100])
    assert torch.isnan(d.float()).all(), "nothing is written on error"


def k_grouped_case(fused_operand, d_dtype, acc):
    m, n, k, other = 48, 80, 300, 200
    bounds = [(0, 100), (100, 100), (100, 253), (250, 300)]  # unaligned, an empty group, overlapping ranges
    plain = torch.randn(k, m if fused_operand == "b" else n).bfloat16()
    gathered = torch.randn(other, n if fused_operand == "b" else m).bfloat16()
    idx = torch.randint(-1, other, (k,), dtype=torch.int32)
    rows = torch.where(idx[:, None] >= 0, gathered[idx.clamp(min=0).long()].double(), 0.0)
    a, b = (plain, gathered) if fused_operand == "b" else (gathered, plain)
    a_k, b_k = (plain.double(), rows) if fused_operand == "b" else (rows, plain.double())
    start = torch.tensor([s for s, _ in bounds], dtype=torch.int32)
    end = torch.tensor([e for _, e in bounds], dtype=torch.int32)
    d = torch.randn(len(bounds), m, n).to(d_dtype)
    want = torch.stack([a_k[s:e].T @ b_k[s:e] for s, e in bounds])
    if acc:
        want = want + d.double()
    return a, b, d, (idx, start, end), want


@pytest.mark.parametrize("fused_operand", ["a", "b"])
@pytest.mark.parametrize("d_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("acc", [True, False])
def test_k_grouped_tn_contiguous_tl(fused_operand, d_dtype, acc):
    a, b, d, handle, want = k_grouped_case(fused_operand, d_dtype, acc)
    fn = getattr(dg.legacy, f"{fused_operand}_fused_k_grouped_bf16_gemm_tn_contiguous_tl")
    if on_npu_kernels(a):
        with pytest.raises(NotImplementedError, match="no NPU kernel"):
            fn(a, b, d, handle, acc)
        return
    fn(a, b, d, handle, acc)
    if not acc:
        assert (d[1].float() == 0).all(), "an empty group without acc is zero"
    for g in range(d.size(0)):
        if d_dtype == torch.float32:
            assert calc_diff(d[g], want[g]) < 1e-9
            assert torch.allclose(d[g].double(), want[g], rtol=1e-5, atol=1e-4)
        else:
            bf16_close(d[g], want[g])


def test_k_grouped_validates_ranges_and_indices():
    a, b, d, (idx, start, end), _ = k_grouped_case("a", torch.float32, False)
    before = d.clone()
    bad = idx.clone()
    bad[3] = 200
    with pytest.raises(ValueError, match=r"^k_indices: position 3 gathers row 200 of a"):
        dg.legacy.a_fused_k_grouped_bf16_gemm_tn_contiguous_tl(a, b, d, (bad, start, end), False)
    with pytest.raises(ValueError, match="^k_end: group 0 ends at K = 301"):
        dg.legacy.a_fused_k_grouped_bf16_gemm_tn_contiguous_tl(a, b, d, (idx, start, end.clone().fill_(301)), False)
    with pytest.raises(TypeError, match="^acc: expected a bool"):
        dg.legacy.b_fused_k_grouped_bf16_gemm_tn_contiguous_tl(a, b, d, (idx, start, end), 1)
    assert torch.equal(d, before), "nothing is written on error"
