"""Every grouped entry point called the way the DeepGEMM layers of vLLM and SGLang call it.

Engines allocate the permuted activations of an MoE layer and their scales with ``torch.empty``: the rows past
``masked_m[g]`` of a masked layout, the padding rows (id -1) of a contiguous layout and the gap rows of a psum
layout hold whatever the allocator returned. Upstream defines D only in the other rows and never looks at the
padding rows' values. Here those rows are filled with NaN bytes (activations and scales: UE8M0 packed in int32,
UE8M0 bytes, float32) and every call must succeed, compute the valid rows against a float64 reference on the
dequantised inputs, and give them bit for bit what the same call gives with clean padding (no leak, no change of
the kernel's fold or promotion decision). Also an empty expert, an expert map (experts of other ranks: whole
blocks of -1), and `-1` ids. Runs on the host backend and on the npu-model backend (DGA_BACKEND=npu-model).
"""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff, poison_

ALIGN = 128
N, K = 128, 256
NAN_BYTE = 0xFF  # e4m3fn NaN, UE8M0 NaN, and every byte of a float32 NaN pattern
SCALE_FORMS = ["ue8m0_int32", "ue8m0_uint8", "fp32_mx", "fp32_block"]


def fill_nan_bytes_(t, rows):
    """Sets every byte of t[rows] to 0xFF (through a view of the same element size: any strides)."""
    as_int = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[t.element_size()]
    t.view(as_int)[rows] = NAN_BYTE if as_int == torch.uint8 else -1
    return t


def quantise_rows(x, form):
    """(q [.., K] e4m3, the scales in `form` as an engine passes them, float64 dequantised x, recipe)."""
    gran_k = 32 if form == "fp32_mx" else 128
    use_ue8m0 = form != "fp32_block"
    flat = x.reshape(-1, x.size(-1))
    q, sf = dg.per_token_cast_to_fp8(flat, use_ue8m0, gran_k)
    deq = q.double() * sf.double().repeat_interleave(gran_k, 1)[:, :x.size(-1)]
    lead = x.shape[:-1]
    q, sf, deq = q.reshape(*lead, -1), sf.reshape(*lead, -1), deq.reshape(x.shape)
    if form == "ue8m0_int32":  # SM100: upstream-packed int32, MN-major
        sf = dg.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
    elif form == "ue8m0_uint8":
        sf = ((sf.view(torch.int32) >> 23) & 0xFF).to(torch.uint8)
    recipe = {"fp32_mx": (1, 1, 32), "fp32_block": (1, 128, 128)}.get(form, (1, 1, 128))
    return q, sf, deq, recipe


def weights(g, form):
    """B [G, N, K] e4m3 with scales of the form's recipe: per row (UE8M0, MX) or per 128 x 128 block."""
    w = torch.randn(g, N, K)
    if form != "fp32_block":
        q, sf, deq, _ = quantise_rows(w, form)
        return q, sf, deq
    qs, sfs, deqs = [], [], []
    for i in range(g):
        q, sf = dg.per_block_cast_to_fp8(w[i], False)
        qs.append(q), sfs.append(sf)
        deqs.append(q.double() * sf.double().repeat_interleave(128, 0)[:N].repeat_interleave(128, 1)[:, :K])
    return torch.stack(qs), torch.stack(sfs), torch.stack(deqs)


def assert_close(got, want):
    assert calc_diff(got, want) < 1e-5
    # bf16 D: every element within about one bf16 ulp of the float64 value
    assert torch.all((got.double() - want).abs() <= want.abs() * 2 ** -7 + 1e-2)


# ---- masked (vLLM's BatchedDeepGemmExperts, SGLang's masked DeepEP path) ---------------------------------------

def masked_case(form, masked):
    g, m_max = len(masked), 64
    x = torch.randn(g, m_max, K)
    qa, sfa, deq_a, recipe = quantise_rows(x, form)
    qb, sfb, deq_b = weights(g, form)
    masked_m = torch.tensor(masked, dtype=torch.int32)
    return qa, sfa, deq_a, qb, sfb, deq_b, masked_m, recipe


def poison_past_masked_(qa, sfa, masked):
    for gi, r in enumerate(masked):
        fill_nan_bytes_(qa[gi], slice(r, None))
        fill_nan_bytes_(sfa[gi], slice(r, None))


def run_masked(qa, sfa, qb, sfb, masked_m, recipe):
    d = poison_(torch.empty(qa.size(0), qa.size(1), N, dtype=torch.bfloat16))
    dg.m_grouped_fp8_fp4_gemm_nt_masked((qa, sfa), (qb, sfb), d, masked_m, 32, recipe=recipe)
    return d


@pytest.mark.parametrize("form", SCALE_FORMS)
def test_masked_rows_past_masked_m_hold_nan_bytes(form):
    masked = [17, 0, 64, 1]  # a partial group, an empty expert, a full one, one row
    qa, sfa, deq_a, qb, sfb, deq_b, masked_m, recipe = masked_case(form, masked)
    clean = run_masked(qa, sfa, qb, sfb, masked_m, recipe)
    poison_past_masked_(qa, sfa, masked)
    d = run_masked(qa, sfa, qb, sfb, masked_m, recipe)
    for gi, r in enumerate(masked):
        assert torch.equal(d[gi, :r].view(torch.int16), clean[gi, :r].view(torch.int16)), f"group {gi}"
        if r:
            assert_close(d[gi, :r], deq_a[gi, :r] @ deq_b[gi].T)
        assert torch.isnan(d[gi, r:].float()).all(), "rows past masked_m are left untouched"


@pytest.mark.parametrize("form", SCALE_FORMS)
def test_masked_nan_in_a_valid_row_stays_in_that_row(form):
    masked = [20, 33]
    qa, sfa, deq_a, qb, sfb, deq_b, masked_m, recipe = masked_case(form, masked)
    fill_nan_bytes_(qa[0], slice(5, 6))  # a NaN activation row below masked_m: its output is NaN, no other
    d = run_masked(qa, sfa, qb, sfb, masked_m, recipe)
    assert torch.isnan(d[0, 5].float()).all()
    rows = [r for r in range(20) if r != 5]
    assert_close(d[0, rows], deq_a[0, rows] @ deq_b[0].T)
    assert_close(d[1, :33], deq_a[1, :33] @ deq_b[1].T)


def test_masked_ue8m0_nan_byte_in_a_valid_row_is_refused():
    masked = [20, 33]
    qa, sfa, _, qb, sfb, _, masked_m, recipe = masked_case("ue8m0_uint8", masked)
    sfa[1, 32, 0] = NAN_BYTE
    d = poison_(torch.empty(2, 64, N, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match=r"^sfa: .*NaN.*sfa\[1, 32, 0\]"):
        dg.m_grouped_fp8_fp4_gemm_nt_masked((qa, sfa), (qb, sfb), d, masked_m, 32, recipe=recipe)
    assert torch.isnan(d.float()).all(), "nothing is written on error"


def test_bf16_masked_rows_past_masked_m_hold_nan():
    masked = [3, 0, 64]
    a, b = torch.randn(3, 64, K).bfloat16(), torch.randn(3, N, K).bfloat16()
    masked_m = torch.tensor(masked, dtype=torch.int32)
    clean = poison_(torch.empty(3, 64, N, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_masked(a, b, clean, masked_m, 16)
    for gi, r in enumerate(masked):
        fill_nan_bytes_(a[gi], slice(r, None))
    d = poison_(torch.empty(3, 64, N, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 16)
    for gi, r in enumerate(masked):
        assert torch.equal(d[gi, :r].view(torch.int16), clean[gi, :r].view(torch.int16))
        if r:
            assert_close(d[gi, :r], a[gi, :r].double() @ b[gi].double().T)


# ---- contiguous (vLLM's DeepGemmExperts, with and without an expert map) -----------------------------------------

def contiguous_ids(sizes, absent=()):
    """Per-row ids of upstream's contiguous layout: each expert's rows padded to ALIGN with -1; an expert in
    `absent` (another rank's, under an expert map) has its whole block set to -1. Returns (ids, valid rows)."""
    ids, valid = [], []
    for e, s in enumerate(sizes):
        block = [e] * s + [-1] * (-(-s // ALIGN) * ALIGN - s)
        if e in absent:
            block = [-1] * len(block)
        valid += [i >= 0 for i in block]
        ids += block
    return torch.tensor(ids, dtype=torch.int32), torch.tensor(valid)


def run_contiguous(qa, sfa, qb, sfb, layout, recipe, psum=False):
    d = poison_(torch.empty(qa.size(0), N, dtype=torch.bfloat16))
    dg.m_grouped_fp8_fp4_gemm_nt_contiguous((qa, sfa), (qb, sfb), d, layout, recipe=recipe, use_psum_layout=psum,
                                            ensure_zero_padding=False)
    return d


def contiguous_case(form, sizes, absent=()):
    ids, valid = contiguous_ids(sizes, absent)
    x = torch.randn(ids.numel(), K)
    qa, sfa, deq_a, recipe = quantise_rows(x, form)
    qb, sfb, deq_b = weights(len(sizes), form)
    return ids, valid, qa, sfa, deq_a, qb, sfb, deq_b, recipe


@pytest.mark.parametrize("form", SCALE_FORMS)
@pytest.mark.parametrize("absent", [(), (1,)], ids=["all_local", "expert_map"])
def test_contiguous_padding_rows_hold_nan_bytes(form, absent):
    sizes = [40, 128, 0, 1]  # a partial block, a full one, an empty expert, one row
    ids, valid, qa, sfa, deq_a, qb, sfb, deq_b, recipe = contiguous_case(form, sizes, absent)
    clean = run_contiguous(qa, sfa, qb, sfb, ids, recipe)
    fill_nan_bytes_(qa, ~valid)
    fill_nan_bytes_(sfa, ~valid)
    d = run_contiguous(qa, sfa, qb, sfb, ids, recipe)
    assert torch.equal(d[valid].view(torch.int16), clean[valid].view(torch.int16))
    for r0 in range(0, ids.numel(), ALIGN):
        e = int(ids[r0])
        rows = torch.nonzero(ids[r0:r0 + ALIGN] == e).flatten() + r0 if e >= 0 else None
        if rows is not None:
            assert_close(d[rows], deq_a[rows] @ deq_b[e].T)
        else:  # a block of another rank's expert (or only padding) is left untouched
            assert torch.isnan(d[r0:r0 + ALIGN].float()).all()


@pytest.mark.parametrize("form", ["ue8m0_int32", "fp32_mx", "fp32_block"])
def test_psum_gap_rows_hold_nan_bytes(form):
    sizes = [40, 0, 130]
    ends, row, valid = [], 0, torch.zeros(ALIGN * 4, dtype=torch.bool)
    for s in sizes:
        start = -(-row // ALIGN) * ALIGN
        valid[start:start + s] = True
        row = start + s
        ends.append(row)
    x = torch.randn(valid.numel(), K)
    qa, sfa, deq_a, recipe = quantise_rows(x, form)
    qb, sfb, deq_b = weights(len(sizes), form)
    layout = torch.tensor(ends, dtype=torch.int32)
    clean = run_contiguous(qa, sfa, qb, sfb, layout, recipe, psum=True)
    fill_nan_bytes_(qa, ~valid)
    fill_nan_bytes_(sfa, ~valid)
    d = run_contiguous(qa, sfa, qb, sfb, layout, recipe, psum=True)
    assert torch.equal(d[valid].view(torch.int16), clean[valid].view(torch.int16))
    assert_close(d[:40], deq_a[:40] @ deq_b[0].T)
    assert_close(d[128:258], deq_a[128:258] @ deq_b[2].T)


def test_bf16_contiguous_padding_rows_hold_nan():
    ids, valid = contiguous_ids([5, 0, 128], absent=(2,))
    ids[-ALIGN:] = 2  # the last expert is local again; its block is full
    valid = ids >= 0
    a, b = torch.randn(ids.numel(), K).bfloat16(), torch.randn(3, N, K).bfloat16()
    clean = poison_(torch.empty(ids.numel(), N, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b, clean, ids)
    fill_nan_bytes_(a, ~valid)
    d = poison_(torch.empty(ids.numel(), N, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids)
    assert torch.equal(d[valid].view(torch.int16), clean[valid].view(torch.int16))
    assert_close(d[:5], a[:5].double() @ b[0].double().T)
    assert_close(d[ALIGN:], a[ALIGN:].double() @ b[2].double().T)
