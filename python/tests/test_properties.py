"""Property-based tests (hypothesis) of the GEMM families against float64 references on the
dequantised inputs: shapes (including 0 and tails), layouts, strides, recipes and group layouts.

Budget: the "ci" profile (default) runs a fixed number of examples per property; set
HYPOTHESIS_PROFILE=nightly for a long run.
"""
import os

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=600, derandomize=False, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

dims = st.integers(0, 300)
layouts = st.sampled_from(["nt", "nn", "tn", "tt"])


def stored(x, transposed, strided):
    """x [R, C] stored as the layout wants ([C, R] when transposed), optionally with a padded row stride."""
    t = x.T if transposed else x
    if strided and t.numel():
        pad = torch.zeros(t.shape[0], t.shape[1] + 8, dtype=t.dtype)
        pad[:, :t.shape[1]] = t
        return pad[:, :t.shape[1]]
    return t.contiguous()


@given(m=dims, n=dims, k=dims, layout=layouts, fp32_out=st.booleans(), with_c=st.booleans(), strided=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_bf16_gemm_matches_float64(m, n, k, layout, fp32_out, with_c, strided, seed):
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(m, k, generator=g).bfloat16(), torch.randn(n, k, generator=g).bfloat16()
    a_s = stored(a, layout[0] == "t", strided)  # "t": A stored [K, M]
    b_s = stored(b, layout[1] == "n", strided)  # "n": B stored [K, N]
    dtype = torch.float32 if fp32_out else torch.bfloat16
    c = torch.randn(m, n, generator=g).to(dtype) if with_c else None
    d = torch.full((m, n), float("nan"), dtype=dtype)
    getattr(dg, f"bf16_gemm_{layout}")(a_s, b_s, d, c)
    ref = a.double() @ b.double().T + (c.double() if with_c else 0)
    if m and n:
        assert calc_diff(d, ref) < (1e-5 if fp32_out else 2e-5)
        assert torch.isfinite(d).all()


@given(m=st.integers(1, 200), n=st.integers(1, 200), kb=st.integers(1, 6),
       recipe=st.sampled_from(["block", "token", "mx"]), layout=layouts, seed=st.integers(0, 2 ** 16))
def test_fp8_gemm_matches_float64_on_dequantised_inputs(m, n, kb, recipe, layout, seed):
    g = torch.Generator().manual_seed(seed)
    gran = 32 if recipe == "mx" else 128
    k = kb * gran
    a, b = torch.randn(m, k, generator=g), torch.randn(n, k, generator=g)
    ue8m0 = recipe == "mx"
    aq, sfa = dg.per_token_cast_to_fp8(a, use_ue8m0=ue8m0, gran_k=gran)
    if recipe == "block":
        bq, sfb = dg.per_block_cast_to_fp8(b, use_ue8m0=False)
        rec = (1, 128, 128)
        b_deq = dg.dequant_fp8(bq, sfb, 128, 128)
    else:
        bq, sfb = dg.per_token_cast_to_fp8(b, use_ue8m0=ue8m0, gran_k=gran)
        rec = (1, 1, gran)
        b_deq = dg.dequant_fp8(bq, sfb, 1, gran)
    a_deq = dg.dequant_fp8(aq, sfa, 1, gran)
    ta, tb = layout[0] == "t", layout[1] == "n"
    a_pair = (aq.T.contiguous() if ta else aq, sfa.T if ta else sfa)  # stored [K, M], scales alike
    b_pair = (bq.T.contiguous() if tb else bq, sfb.T if tb else sfb)
    d = torch.full((m, n), float("nan"))
    getattr(dg, f"fp8_gemm_{layout}")(a_pair, b_pair, d, recipe=rec)
    assert calc_diff(d, a_deq.double() @ b_deq.double().T) < 1e-6


@given(sizes=st.lists(st.integers(0, 150), min_size=1, max_size=5), n=st.integers(1, 96), kb=st.integers(1, 3),
       psum=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_m_grouped_contiguous_matches_per_group_float64(sizes, n, kb, psum, seed):
    g = torch.Generator().manual_seed(seed)
    align = dg.get_mk_alignment_for_contiguous_layout()
    k = 64 * kb
    starts, at = [], 0
    for s in sizes:
        starts.append(at)
        at = (at + s + align - 1) // align * align
    m = max(at, align)
    a = torch.randn(m, k, generator=g).bfloat16()
    b = torch.randn(len(sizes), n, k, generator=g).bfloat16()
    if psum:
        layout = torch.tensor([s + z for s, z in zip(starts, sizes)], dtype=torch.int32)
    else:
        layout = torch.full((m,), -1, dtype=torch.int32)
        for gi, (s, z) in enumerate(zip(starts, sizes)):
            layout[s:s + z] = gi
    d = torch.full((m, n), 7.0, dtype=torch.bfloat16)
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout, use_psum_layout=psum)
    for gi, (s, z) in enumerate(zip(starts, sizes)):
        if z:
            assert calc_diff(d[s:s + z], a[s:s + z].double() @ b[gi].double().T) < 2e-5
