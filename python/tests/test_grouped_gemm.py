"""MoE grouped GEMMs against per-group float64 references."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.runtime import on_npu_kernels
from deepgemm_ascend.testing import calc_diff, poison_

ALIGN = 128


def contiguous_layout(sizes, align=ALIGN):
    """Per-row group ids (-1 padding) and the [start, end) of every group, groups aligned."""
    ids, spans, row = [], [], 0
    for g, s in enumerate(sizes):
        padded = (s + align - 1) // align * align
        ids += [g] * s + [-1] * (padded - s)
        spans.append((row, row + s))
        row += padded
    return torch.tensor(ids, dtype=torch.int32), spans


def psum_layout(sizes, align=ALIGN):
    """Group starts, end offsets (the psum layout) and the aligned end of the last group."""
    starts, ends, row = [], [], 0
    for size in sizes:
        start = (row + align - 1) // align * align
        starts.append(start)
        row = start + size
        ends.append(row)
    return starts, ends, (row + align - 1) // align * align


def expand(sf, gran_mn, gran_k, rows, cols):
    return sf.repeat_interleave(gran_mn, 0)[:rows].repeat_interleave(gran_k, 1)[:, :cols]


@pytest.mark.parametrize("layout", ["nt", "nn"])
def test_bf16_contiguous_uneven_and_empty_groups(layout):
    torch.manual_seed(0)
    sizes, n, k = [130, 0, 7, 256, 1], 96, 160
    ids, spans = contiguous_layout(sizes)
    m, g = ids.numel(), len(sizes)
    a = torch.randn(m, k).bfloat16()  # padding rows not zero: they must be computed with their chunk's group
    b = torch.randn(g, n, k).bfloat16()
    d = poison_(torch.empty(m, n, dtype=torch.bfloat16))
    fn = dg.m_grouped_bf16_gemm_nt_contiguous if layout == "nt" else dg.m_grouped_bf16_gemm_nn_contiguous
    fn(a, b if layout == "nt" else b.transpose(1, 2).contiguous(), d, ids)
    for gi, (s, e) in enumerate(spans):
        if e > s:  # upstream computes the group's whole aligned block, padding rows (id -1) included
            end = (e + ALIGN - 1) // ALIGN * ALIGN
            assert calc_diff(d[s:end], a[s:end].double() @ b[gi].double().T) < 1e-5
    assert not torch.isnan(d.float()).any(), "every row of D is written (upstream's test compares them all)"


@pytest.mark.parametrize("ensure_zero_padding", [True, False])
def test_bf16_contiguous_psum_layout(ensure_zero_padding):
    torch.manual_seed(1)
    sizes, n, k = [100, 128, 0, 33], 64, 128
    starts, ends, aligned_end = psum_layout(sizes)
    m = aligned_end + 16   # M may exceed the last aligned end
    a, b = torch.randn(m, k).bfloat16(), torch.randn(len(sizes), n, k).bfloat16()
    d = poison_(torch.empty(m, n, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, torch.tensor(ends, dtype=torch.int32), use_psum_layout=True,
                                         ensure_zero_padding=ensure_zero_padding)
    for gi, (s, e) in enumerate(zip(starts, ends)):
        if e > s:
            assert calc_diff(d[s:e], a[s:e].double() @ b[gi].double().T) < 1e-5
    gap = d[ends[0]:starts[1]].float()
    assert (gap == 0).all() if ensure_zero_padding else torch.isnan(gap).all()
    assert torch.isnan(d[-16:].float()).all(), "rows beyond the last group are untouched"


@pytest.mark.parametrize("psum", [False, True], ids=["ids", "psum"])
def test_bf16_contiguous_groups_of_many_chunks(psum):
    """Groups of many aligned chunks: the tiles are planned from the mean group (larger than a chunk), so a
    tile spans several chunks of a group, starts at a group's start inside a window and ends at its end."""
    torch.manual_seed(5)
    sizes, n, k = [700, 0, 300, 1000, 129, 384], 128, 64
    if psum:
        starts, ends, m = psum_layout(sizes)
        spans, layout = list(zip(starts, ends)), torch.tensor(ends, dtype=torch.int32)
    else:
        layout, spans = contiguous_layout(sizes)
        m = layout.numel()
    a, b = torch.randn(m, k).bfloat16(), torch.randn(len(sizes), n, k).bfloat16()
    d = poison_(torch.empty(m, n, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout, use_psum_layout=psum, ensure_zero_padding=False)
    for gi, (s, e) in enumerate(spans):
        if e > s:
            assert calc_diff(d[s:e], a[s:e].double() @ b[gi].double().T) < 1e-5, f"group {gi}"


def fp8_operands(m, g, n, k):
    a, b = torch.randn(m, k), torch.randn(g, n, k)
    qa, sa = dg.per_token_cast_to_fp8(a, False)
    qb, sb = zip(*[dg.per_block_cast_to_fp8(b[i], False) for i in range(g)])
    qb, sb = torch.stack(qb), torch.stack(sb)
    deq_a = qa.double() * expand(sa.double(), 1, 128, m, k)
    deq_b = [qb[i].double() * expand(sb[i].double(), 128, 128, n, k) for i in range(g)]
    return (qa, sa), (qb, sb), deq_a, deq_b, a, b


# The second case's groups span many aligned chunks: its tiles are planned from the mean group.
@pytest.mark.parametrize("seed,sizes,k", [(2, [64, 200, 0, 128], 384), (6, [600, 130, 0, 900], 256)],
                         ids=["small_groups", "groups_of_many_chunks"])
def test_fp8_contiguous(seed, sizes, k):
    torch.manual_seed(seed)
    n = 256
    ids, spans = contiguous_layout(sizes)
    (qa, sa), (qb, sb), deq_a, deq_b, a, b = fp8_operands(ids.numel(), len(sizes), n, k)
    d = poison_(torch.empty(ids.numel(), n, dtype=torch.bfloat16))
    dg.m_grouped_fp8_gemm_nt_contiguous((qa, sa), (qb, sb), d, ids)
    for gi, (s, e) in enumerate(spans):
        if e > s:
            assert calc_diff(d[s:e], deq_a[s:e] @ deq_b[gi].T) < 1e-5
            assert calc_diff(d[s:e], a[s:e].double() @ b[gi].double().T) < 1e-3


@pytest.mark.parametrize("b_kind", ["fp4", "fp8"])
def test_mx_contiguous_with_mn_major_b_through_nt(b_kind):
    """Upstream's MN-major B of an nt call: the .mT view of [G, K, N / 2] (FP4, packed along N) or of a
    contiguous [G, K, N] (FP8); the scales [G, N, K / 32] as for K-major B."""
    torch.manual_seed(11)
    sizes, n, k = [70, 0, 128], 96, 192
    ids, spans = contiguous_layout(sizes)
    m, g = ids.numel(), len(sizes)
    a, b = torch.randn(m, k), torch.randn(g, n, k)
    qa, sa = dg.per_token_cast_to_fp8(a, True, gran_k=32)
    if b_kind == "fp4":
        q, sb = zip(*[dg.per_token_cast_to_fp4(b[i], True, gran_k=32) for i in range(g)])
        deq_b = [dg.cast_back_from_fp4(q[i], sb[i], gran_k=32).double() for i in range(g)]
        qb = torch.stack([dg.transpose_packed_fp4(q[i]) for i in range(g)]).mT
    else:
        q, sb = zip(*[dg.per_token_cast_to_fp8(b[i], True, gran_k=32) for i in range(g)])
        deq_b = [q[i].double() * sb[i].double().repeat_interleave(32, 1) for i in range(g)]
        qb = torch.stack(q).mT.contiguous().mT
    d = poison_(torch.empty(m, n, dtype=torch.bfloat16))
    dg.m_grouped_fp8_fp4_gemm_nt_contiguous((qa, sa), (qb, torch.stack(sb)), d, ids, recipe=(1, 1, 32))
    deq_a = qa.double() * sa.double().repeat_interleave(32, 1)
    for gi, (s, e) in enumerate(spans):
        if e > s:
            assert calc_diff(d[s:e], deq_a[s:e] @ deq_b[gi].T) < 1e-5


def test_fp8_mx_contiguous_psum_with_garbage_gap_scales():
    torch.manual_seed(10)
    sizes, n, k = [100, 40], 64, 256
    starts, ends, m = psum_layout(sizes)
    a, b = torch.randn(m, k), torch.randn(len(sizes), n, k)
    qa, sa = dg.per_token_cast_to_fp8(a, True, gran_k=32)
    sa[ends[0]:starts[1]] = 3.0                 # gap rows: not powers of two, never inspected
    qb, sb = zip(*[dg.per_token_cast_to_fp8(b[i], True, gran_k=32) for i in range(len(sizes))])
    qb, sb = torch.stack(qb), torch.stack(sb)
    d = poison_(torch.empty(m, n, dtype=torch.bfloat16))
    dg.m_grouped_fp8_gemm_nt_contiguous((qa, sa), (qb, sb), d, torch.tensor(ends, dtype=torch.int32),
                                        recipe=(1, 1, 32), use_psum_layout=True)
    for gi, (s, e) in enumerate(zip(starts, ends)):
        deq_a = qa[s:e].double() * sa[s:e].double().repeat_interleave(32, 1)
        deq_b = qb[gi].double() * sb[gi].double().repeat_interleave(32, 1)
        assert calc_diff(d[s:e], deq_a @ deq_b.T) < 1e-5


def test_bf16_masked():
    torch.manual_seed(3)
    g, m_max, n, k = 6, 64, 80, 192
    masked = torch.tensor([0, 1, 17, 64, 33, 5], dtype=torch.int32)
    a, b = torch.randn(g, m_max, k).bfloat16(), torch.randn(g, n, k).bfloat16()
    d = poison_(torch.empty(g, m_max, n, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_masked(a, b, d, masked, expected_m=20)
    for gi in range(g):
        r = int(masked[gi])
        if r:
            assert calc_diff(d[gi, :r], a[gi, :r].double() @ b[gi].double().T) < 1e-5
        assert torch.isnan(d[gi, r:].float()).all(), "rows beyond masked_m must be untouched"
    assert dg.bf16_m_grouped_gemm_nt_masked is dg.m_grouped_bf16_gemm_nt_masked


def test_fp8_masked():
    torch.manual_seed(4)
    g, m_max, n, k = 4, 32, 128, 256
    masked = torch.tensor([32, 0, 9, 20], dtype=torch.int32)
    a, b = torch.randn(g, m_max, k), torch.randn(g, n, k)
    qa, sa = zip(*[dg.per_token_cast_to_fp8(a[i], False) for i in range(g)])
    qb, sb = zip(*[dg.per_block_cast_to_fp8(b[i], False) for i in range(g)])
    qa, sa, qb, sb = torch.stack(qa), torch.stack(sa), torch.stack(qb), torch.stack(sb)
    d = poison_(torch.empty(g, m_max, n, dtype=torch.bfloat16))
    dg.m_grouped_fp8_gemm_nt_masked((qa, sa), (qb, sb), d, masked, expected_m=16)
    for gi in range(g):
        r = int(masked[gi])
        if r:
            deq_a = qa[gi, :r].double() * expand(sa[gi, :r].double(), 1, 128, r, k)
            deq_b = qb[gi].double() * expand(sb[gi].double(), 128, 128, n, k)
            assert calc_diff(d[gi, :r], deq_a @ deq_b.T) < 1e-5
        assert torch.isnan(d[gi, r:].float()).all()


@pytest.mark.parametrize("in_place", [False, True])
def test_bf16_k_grouped(in_place):
    torch.manual_seed(5)
    ks, m, n = [128, 0, 256, 384], 96, 72
    a, b = torch.randn(sum(ks), m).bfloat16(), torch.randn(sum(ks), n).bfloat16()
    c = torch.randn(len(ks), m, n) * 32
    d = c.clone() if in_place else poison_(torch.empty(len(ks), m, n))
    dg.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, torch.tensor(ks, dtype=torch.int32), c=d if in_place else c)
    k0 = 0
    for gi, kg in enumerate(ks):
        ref = c[gi].double() + a[k0:k0 + kg].double().T @ b[k0:k0 + kg].double()
        if kg == 0:
            assert torch.equal(d[gi], c[gi])
        else:
            assert calc_diff(d[gi], ref) < 1e-5
        k0 += kg


def test_bf16_k_grouped_psum_layout():
    torch.manual_seed(8)
    sizes, m, n = [100, 0, 128, 33], 48, 40
    starts, ends, rows = psum_layout(sizes)
    a, b = torch.randn(rows, m).bfloat16(), torch.randn(rows, n).bfloat16()
    c = torch.randn(len(sizes), m, n)
    d = poison_(torch.empty(len(sizes), m, n))
    dg.k_grouped_bf16_gemm_tn_contiguous(a, b, d, None, torch.tensor(ends, dtype=torch.int32), c=c,
                                         use_psum_layout=True)
    for gi, (s, e) in enumerate(zip(starts, ends)):
        ref = c[gi].double() + a[s:e].double().T @ b[s:e].double()
        assert calc_diff(d[gi], ref) < 1e-5 if e > s else torch.equal(d[gi], c[gi])


def test_fp8_k_grouped():
    torch.manual_seed(6)
    ks, m, n = [256, 128, 0, 384], 64, 96
    a, b = torch.randn(sum(ks), m), torch.randn(sum(ks), n)
    qa, sa, qb, sb, k0 = [], [], [], [], 0
    for kg in ks:
        if kg:
            for x, q, s in ((a, qa, sa), (b, qb, sb)):
                qx, sx = dg.per_channel_cast_to_fp8(x[k0:k0 + kg], False)
                q.append(qx)
                s.append(sx)
        k0 += kg
    qa, sa, qb, sb = torch.cat(qa), torch.cat(sa), torch.cat(qb), torch.cat(sb)
    c = torch.randn(len(ks), m, n)
    d = poison_(torch.empty(len(ks), m, n))
    dg.k_grouped_fp8_gemm_tn_contiguous((qa, sa), (qb, sb), d, ks, torch.tensor(ks, dtype=torch.int32), c=c)
    deq_a = qa.double() * sa.double().repeat_interleave(128, 0)
    deq_b = qb.double() * sb.double().repeat_interleave(128, 0)
    k0 = 0
    for gi, kg in enumerate(ks):
        ref = c[gi].double() + deq_a[k0:k0 + kg].T @ deq_b[k0:k0 + kg]
        assert calc_diff(d[gi], ref) < 1e-5 if kg else torch.equal(d[gi], c[gi])
        k0 += kg


@pytest.mark.parametrize("sb_mn_major", [True, False], ids=["sfb_mn_major", "sfb_k_major"])
def test_fp8_k_grouped_nt_flat_layout(sb_mn_major):
    torch.manual_seed(9)
    ks, m, n = [256, 0, 128], 40, 56
    blocks_a, blocks_b, sas, sbs = [], [], [], []
    for kg in ks:
        if kg:
            for blocks, scales, rows in ((blocks_a, sas, m), (blocks_b, sbs, n)):
                q, s = dg.per_token_cast_to_fp8(torch.randn(rows, kg), False)
                blocks.append(q.flatten())
                scales.append(s)
    qa, qb = torch.cat(blocks_a), torch.cat(blocks_b)
    sa, sb = torch.cat(sas, dim=1).T.contiguous().T, torch.cat(sbs, dim=1)  # MN-major and K-major scales
    if sb_mn_major:
        sb = sb.T.contiguous().T
    c = torch.randn(len(ks), m, n)
    d = poison_(torch.empty(len(ks), m, n))
    if not sb_mn_major and on_npu_kernels(qa):  # docs/MIGRATION.md: one vector load per K block of columns
        before = d.clone()
        with pytest.raises(ValueError, match="^sfb: per-column float32 scales must be MN-major"):
            dg.k_grouped_fp8_gemm_nt_contiguous((qa, sa), (qb, sb), d, ks, None, c=c)
        assert torch.equal(d.view(torch.int32), before.view(torch.int32))
        return
    dg.k_grouped_fp8_gemm_nt_contiguous((qa, sa), (qb, sb), d, ks, None, c=c)
    k0, kb0 = 0, 0
    for gi, kg in enumerate(ks):
        if kg == 0:
            assert torch.equal(d[gi], c[gi])
            continue
        qa_g = qa[m * k0:m * (k0 + kg)].view(m, kg).double()
        qb_g = qb[n * k0:n * (k0 + kg)].view(n, kg).double()
        deq_a = qa_g * sa[:, kb0:kb0 + kg // 128].double().repeat_interleave(128, 1)
        deq_b = qb_g * sb[:, kb0:kb0 + kg // 128].double().repeat_interleave(128, 1)
        assert calc_diff(d[gi], c[gi].double() + deq_a @ deq_b.T) < 1e-5
        k0, kb0 = k0 + kg, kb0 + kg // 128


def test_alignment_knobs():
    assert dg.get_mk_alignment_for_contiguous_layout() == 128
    assert dg.get_m_alignment_for_contiguous_layout() == dg.get_k_alignment_for_contiguous_layout() == 128
    assert dg.get_theoretical_mk_alignment_for_contiguous_layout() == 128
    assert dg.get_theoretical_mk_alignment_for_contiguous_layout(20) == 32
    try:
        dg.set_mk_alignment_for_contiguous_layout(64)
        torch.manual_seed(7)
        ids, spans = contiguous_layout([70, 10], align=64)
        a, b = torch.randn(ids.numel(), 64).bfloat16(), torch.randn(2, 32, 64).bfloat16()
        d = poison_(torch.empty(ids.numel(), 32, dtype=torch.bfloat16))
        dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids)
        for gi, (s, e) in enumerate(spans):
            assert calc_diff(d[s:e], a[s:e].double() @ b[gi].double().T) < 1e-5
        for bad in (20, 0, 2 ** 31, 2 ** 16 + 16):
            with pytest.raises(ValueError, match="^alignment"):
                dg.set_mk_alignment_for_contiguous_layout(bad)
        dg.set_mk_alignment_for_contiguous_layout(2 ** 16)
    finally:
        dg.set_mk_alignment_for_contiguous_layout(128)


class TestErrors:
    def expect(self, exc, pattern, fn, d):
        before = d.clone()
        with pytest.raises(exc, match=pattern):
            fn()
        assert torch.equal(d.view(torch.int16) if d.dtype == torch.bfloat16 else d,
                           before.view(torch.int16) if before.dtype == torch.bfloat16 else before)

    def test_contiguous(self):
        a, b = torch.randn(256, 64).bfloat16(), torch.randn(2, 32, 64).bfloat16()
        d = torch.full((256, 32), 7.0).bfloat16()
        if not on_npu_kernels(a):  # the NPU kernels read grouped_layout on the device (docs/MIGRATION.md)
            misaligned = torch.tensor([0] * 100 + [1] * 156, dtype=torch.int32)
            self.expect(ValueError, r"^grouped_layout: group 1 starts at row 100",
                        lambda: dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, misaligned), d)
            out_of_range = torch.tensor([0] * 128 + [2] * 128, dtype=torch.int32)
            self.expect(ValueError, r"^grouped_layout: row 128 has group id 2",
                        lambda: dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, out_of_range), d)
        else:  # an aligned chunk whose first id is outside [0, G) is padding: left untouched
            out = d.clone()
            dg.m_grouped_bf16_gemm_nt_contiguous(a, b, out, torch.tensor([0] * 128 + [2] * 128, dtype=torch.int32))
            assert calc_diff(out[:128].double(), a[:128].double() @ b[0].double().T) < 1e-5
            assert torch.equal(out[128:], d[128:])
        ids = torch.tensor([0] * 128 + [1] * 128, dtype=torch.int32)
        self.expect(ValueError, r"^b: expected a 3-D",
                    lambda: dg.m_grouped_bf16_gemm_nt_contiguous(a, b[0], d, ids), d)
        self.expect(TypeError, r"^grouped_layout: expected dtype int32",
                    lambda: dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids.long()), d)
        self.expect(ValueError, r"^expected_m_for_psum_layout",
                    lambda: dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids, expected_m_for_psum_layout=4), d)

    def test_masked(self):
        a, b = torch.randn(2, 16, 64).bfloat16(), torch.randn(2, 32, 64).bfloat16()
        d = torch.full((2, 16, 32), 7.0).bfloat16()
        if not on_npu_kernels(a):  # the NPU kernels read masked_m on the device and clamp (docs/MIGRATION.md)
            self.expect(ValueError, r"^masked_m: group 1 has 17 rows",
                        lambda: dg.m_grouped_bf16_gemm_nt_masked(a, b, d, torch.tensor([3, 17], dtype=torch.int32), 8),
                        d)
        else:  # the count is clamped to M = 16
            out = d.clone()
            dg.m_grouped_bf16_gemm_nt_masked(a, b, out, torch.tensor([3, 17], dtype=torch.int32), 8)
            assert calc_diff(out[1].double(), a[1].double() @ b[1].double().T) < 1e-5
            assert calc_diff(out[0, :3].double(), a[0, :3].double() @ b[0].double().T) < 1e-5
            assert torch.equal(out[0, 3:], d[0, 3:])
        self.expect(ValueError, r"^expected_m",
                    lambda: dg.m_grouped_bf16_gemm_nt_masked(a, b, d, torch.tensor([3, 1], dtype=torch.int32), 0), d)

    def test_k_grouped(self):
        a, b = torch.randn(256, 32).bfloat16(), torch.randn(256, 16).bfloat16()
        c = torch.zeros(2, 32, 16)
        d = torch.full((2, 32, 16), 7.0)
        self.expect(ValueError, r"^ks: group 0 has K = 100",
                    lambda: dg.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [100, 156], None, c=c), d)
        self.expect(ValueError, r"^c: ", lambda: dg.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [128, 128], None), d)
        self.expect(ValueError, r"^ks: sums to",
                    lambda: dg.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [128, 256], None, c=c), d)
