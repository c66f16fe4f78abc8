"""Reliability: many threads calling different kernels while the core count changes, tensors past
2^31 elements / 2^32 bytes, NaN and Inf propagation, and saturating FP8 / FP4 casts."""
import threading

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import _C

THREADS, CALLS = 8, 100


def kernels():
    """Small calls of different kernel families, each with its result computed once up front."""
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(96, 256, generator=g).bfloat16(), torch.randn(80, 256, generator=g).bfloat16()
    aq, sfa = dg.per_token_cast_to_fp8(a, use_ue8m0=False)
    bq, sfb = dg.per_block_cast_to_fp8(b, use_ue8m0=False)
    grouped_b = torch.randn(2, 48, 256, generator=g).bfloat16()
    a_grouped = torch.randn(256, 256, generator=g).bfloat16()
    ids = torch.cat([torch.zeros(100), -torch.ones(28), torch.ones(128)]).int()
    q = torch.randn(16, 8, 64, generator=g).to(torch.float8_e4m3fn)
    kv, sfkv = dg.per_custom_dims_cast_to_fp8(torch.randn(40, 64, generator=g), (0,), False)
    w = torch.randn(16, 8, generator=g)
    ks, ke = torch.zeros(16, dtype=torch.int32), torch.full((16,), 40, dtype=torch.int32)
    hc_a, hc_b = torch.randn(64, 128, generator=g).bfloat16(), torch.randn(24, 128, generator=g)

    def bf16():
        d = torch.empty(96, 80)
        dg.bf16_gemm_nt(a, b, d)
        return d

    def fp8():
        d = torch.empty(96, 80, dtype=torch.bfloat16)
        dg.fp8_gemm_nt((aq, sfa), (bq, sfb), d)
        return d

    def grouped():
        d = torch.zeros(256, 48, dtype=torch.bfloat16)
        dg.m_grouped_bf16_gemm_nt_contiguous(a_grouped, grouped_b, d, ids)
        return d

    def mqa():
        return dg.fp8_mqa_logits(q, (kv, sfkv), w, ks, ke).clone()

    def hc():
        d, s = torch.empty(64, 24), torch.empty(64)
        dg.tf32_hc_prenorm_gemm(hc_a, hc_b, d, s)
        return torch.cat([d, s[:, None]], 1)

    def nz():
        return dg.layout.to_nz(a)

    fns = [bf16, fp8, grouped, mqa, hc, nz]
    return [(fn, fn()) for fn in fns]


def test_threads_call_different_kernels_while_the_core_count_changes():
    work = kernels()
    wrong, done = [], threading.Event()

    def caller(t):
        for i in range(CALLS):
            fn, expected = work[(t + i) % len(work)]
            if not torch.equal(fn(), expected):
                wrong.append((t, i, fn.__name__))

    def knob():
        cores = dg.info()["max_ai_cores"]
        i = 0
        while not done.is_set():
            dg.set_num_ai_cores(1 + i % cores)
            i += 1
        dg.set_num_ai_cores(0)

    threads = [threading.Thread(target=caller, args=(t,)) for t in range(THREADS)]
    k = threading.Thread(target=knob)
    k.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    k.join()
    assert not wrong, f"{len(wrong)} of {THREADS * CALLS} calls differed: {wrong[:5]}"


def test_tensors_beyond_2_31_elements_and_2_32_bytes():
    k = 2048
    m = (1 << 31) // k + 128  # A has more than 2^31 elements (over 4 GiB of bf16)
    try:
        a = torch.zeros(m, k, dtype=torch.bfloat16)
    except RuntimeError:
        pytest.skip("not enough memory for a 4 GiB tensor")
    rows = torch.tensor([0, m // 2, m - 65, m - 1])
    a[rows] = torch.randn(len(rows), k).bfloat16()
    b = torch.randn(16, k).bfloat16()
    d = torch.full((m, 16), float("nan"))
    dg.bf16_gemm_nt(a, b, d)
    ref = a[rows].double() @ b.double().T
    assert dg.testing.calc_diff(d[rows], ref) < 1e-10
    others = torch.ones(m, dtype=torch.bool)
    others[rows] = False
    assert torch.all(d[others] == 0)
    # The last rows, past byte offset 2^32 of A, through a view that starts there.
    tail = a[m - 64:]
    assert tail.storage_offset() * 2 > (1 << 32)
    d_tail = torch.empty(64, 16)
    dg.bf16_gemm_nt(tail, b, d_tail)
    assert torch.equal(d_tail, d[m - 64:])


def test_nan_and_inf_propagate_as_in_the_reference():
    a, b = torch.randn(32, 64).bfloat16(), torch.randn(16, 64).bfloat16()
    a[3, 5] = float("nan")
    a[7, 1] = float("inf")
    b[2, 1] = 0.0  # inf * 0 is NaN, as in IEEE
    d = torch.empty(32, 16)
    dg.bf16_gemm_nt(a, b, d)
    ref = a.float() @ b.float().T
    assert torch.equal(torch.isnan(d), torch.isnan(ref)) and torch.equal(torch.isinf(d), torch.isinf(ref))
    finite = torch.isfinite(ref)
    assert dg.testing.calc_diff(d[finite], ref[finite].double()) < 1e-5
    assert torch.isnan(d[3]).all() and torch.isnan(d[7, 2]) and torch.isinf(d[7, 0])


def test_fp8_and_fp4_casts_saturate_as_the_formats_specify():
    x = torch.tensor([1e6, -1e6, 448.0, 500.0, float("inf"), float("-inf"), float("nan"), 1e-12])
    e4m3 = torch.empty(8, dtype=torch.uint8)
    _C.encode("float8_e4m3fn", dg._tensor.desc(x, "src"), dg._tensor.desc(e4m3, "dst"))
    assert e4m3.tolist()[:6] == [0x7E, 0xFE, 0x7E, 0x7E, 0x7E, 0xFE]  # saturate to +-448, no infinity
    assert e4m3[6] & 0x7F == 0x7F and e4m3[7] == 0  # NaN stays NaN; tiny values flush to +0
    e2m1 = torch.empty(8, dtype=torch.uint8)
    _C.encode("float4_e2m1", dg._tensor.desc(x, "src"), dg._tensor.desc(e2m1, "dst"))
    assert e2m1.tolist()[:6] == [0x7, 0xF, 0x7, 0x7, 0x7, 0xF] and e2m1[6] == 0  # +-6; NaN -> +0 (no NaN)
