"""Older upstream call forms that engines still use: 1-D context_lens [B] of the paged MQA logits and
their metadata (upstream until 7f2a703), and the K-grouped UE8M0 packer without k_alignment (four arguments,
7f2a703 to 88965b0; three arguments, gran_k 128, before). Each is checked against the current form it stands
for, bit for bit, and the paged logits against float64 references on the dequantised inputs."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import utils
from deepgemm_ascend.runtime import on_npu_kernels
from deepgemm_ascend.testing import calc_diff
from test_paged_mqa_logits import build_cache
from test_sf_layout import k_grouped_reference, random_exponents


def upstream_lengths(lens_1d, next_n):
    """Upstream's reading of a 1-D length L (the reference's q_offsets = arange(L - next_n, L)): row t of the
    request sees the positions p <= L - next_n + t, i.e. the 2-D length max(0, L - next_n + 1 + t)."""
    return torch.tensor([[max(0, int(n) - next_n + 1 + t) for t in range(next_n)] for n in lens_1d],
                        dtype=torch.int32).view(len(lens_1d), next_n)


def paged_inputs(fp4, next_n, batch=3, h=16, block_kv=32, max_blocks=3, seed=0):
    """(q pair, cache, weights, table, dequantised q [B, next_n, H, D], dequantised KV per request, width)."""
    torch.manual_seed(seed)
    d = 128 if fp4 else 64
    kv_rows = torch.randn(batch * max_blocks * block_kv, d)
    cache, perm, deq = build_cache(kv_rows, block_kv, batch * max_blocks + 1, fp4)
    table = perm[:batch * max_blocks].view(batch, max_blocks).to(torch.int32)
    q = torch.randn(batch, next_n, h, d)
    if fp4:
        q4, sq = dg.per_token_cast_to_fp4(q.reshape(-1, d), True, gran_k=32, use_packed_ue8m0=True)
        qp = (q4.view(batch, next_n, h, d // 2), sq.view(batch, next_n, h))
        qd = dg.cast_back_from_fp4(q4, sq, gran_k=32, use_packed_ue8m0=True).double().view(batch, next_n, h, d)
    else:
        q8 = q.to(torch.float8_e4m3fn)
        qp, qd = (q8, None), q8.double()
    kv_b = deq.view(batch, max_blocks * block_kv, d)
    return qp, cache, torch.randn(batch * next_n, h), table, qd, kv_b, max_blocks * block_kv


def paged(qp, cache, w, lens, table, width, clean, indices=None):
    meta = dg.get_paged_mqa_logits_metadata(lens, cache.shape[1], dg.get_num_sms())
    return dg.fp8_fp4_paged_mqa_logits(qp, cache, w, lens, table, meta, width, clean_logits=clean, indices=indices)


@pytest.mark.parametrize("fp4", [False, True], ids=["fp8", "fp4"])
@pytest.mark.parametrize("next_n", [1, 2])
@pytest.mark.parametrize("clean", [False, True])
def test_1d_context_lens_are_the_lengths_of_each_requests_last_row(fp4, next_n, clean):
    qp, cache, w, table, qd, kv_b, width = paged_inputs(fp4, next_n, seed=10 * fp4 + next_n)
    lens_1d = torch.tensor([width - 7, 0, 1] if next_n == 2 else [width - 7, 0, 40], dtype=torch.int32)
    lens_2d = upstream_lengths(lens_1d, next_n)
    got = paged(qp, cache, w, lens_1d, table, width, clean)
    want = paged(qp, cache, w, lens_2d, table, width, clean)
    assert got.shape == want.shape == (3 * next_n, width)
    for b in range(3):
        for t in range(next_n):
            r, n = b * next_n + t, int(lens_2d[b, t])
            assert torch.equal(got[r, :n].view(torch.int32), want[r, :n].view(torch.int32)), (b, t)
            positions = torch.arange(width)
            assert n == int((positions <= int(lens_1d[b]) - next_n + t).sum())  # upstream's mask, counted
            if n:
                ref = ((qd[b, t] @ kv_b[b, :n].T).clamp(min=0) * w[r].double()[:, None]).sum(0)
                assert (got[r, :n] != 0).any() and calc_diff(got[r, :n], ref) < 5e-6, (b, t)
            if clean:
                assert torch.isneginf(got[r, n:]).all(), (b, t)
    if clean:
        assert torch.equal(got.view(torch.int32), want.view(torch.int32))


def test_1d_context_lens_with_next_n_3_and_the_fp8_legacy_entry():
    qp, cache, w, table, qd, kv_b, width = paged_inputs(False, 3, batch=2, seed=4)
    lens_1d = torch.tensor([width, 2], dtype=torch.int32)  # request 1: rows of lengths 0, 1, 2
    lens_2d = upstream_lengths(lens_1d, 3)
    assert lens_2d.tolist() == [[width - 2, width - 1, width], [0, 1, 2]]
    meta = dg.get_paged_mqa_logits_metadata(lens_1d, cache.shape[1], dg.get_num_sms())
    got = dg.fp8_paged_mqa_logits(qp[0], cache, w, lens_1d, table, meta, width, True)
    want = dg.fp8_paged_mqa_logits(qp[0], cache, w, lens_2d, table, meta, width, True)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32)) and got[:3, :8].isfinite().all()


@pytest.mark.parametrize("next_n", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_1d_metadata_is_the_metadata_of_the_2d_lengths(next_n, seed):
    torch.manual_seed(seed)
    batch, sms = int(torch.randint(1, 12, ())), int(torch.randint(1, 24, ()))
    lens_1d = torch.randint(0, 2000, (batch,), dtype=torch.int32)
    lens_1d[0] = 0
    got = dg.get_paged_mqa_logits_metadata(lens_1d, 64, sms)
    want = dg.get_paged_mqa_logits_metadata(upstream_lengths(lens_1d, next_n), 64, sms)
    assert got.dtype == torch.int32 and torch.equal(got, want)
    assert got[-1, 0] == batch or int(lens_1d.max()) == 0


def test_1d_context_lens_errors_and_negative_lengths():
    qp, cache, w, table, _, _, width = paged_inputs(False, 2, seed=3)
    lens_1d = torch.tensor([50, 60, 70], dtype=torch.int32)
    assert paged(qp, cache, w, lens_1d, table, width, True).shape == (6, width)
    meta = dg.get_paged_mqa_logits_metadata(lens_1d, 32, dg.get_num_sms())
    with pytest.raises(ValueError, match=r"^context_lens: expected \[B, next_n\] = \[3, 2\] or the older \[B\]"):
        dg.fp8_fp4_paged_mqa_logits(qp, cache, w, torch.arange(50, 56, dtype=torch.int32), table, meta, width)
    with pytest.raises(TypeError, match="^context_lens: expected int32 lengths, got torch.int64"):
        dg.fp8_fp4_paged_mqa_logits(qp, cache, w, lens_1d.long(), table, meta, width)
    with pytest.raises(TypeError, match=r"^context_lens: expected an int32 \[B, next_n\] tensor \(or the older"):
        dg.get_paged_mqa_logits_metadata(lens_1d.long(), 32, 4)
    with pytest.raises(ValueError, match="^context_lens: lengths must be >= 0, got -5"):
        dg.get_paged_mqa_logits_metadata(torch.tensor([50, -5, 70], dtype=torch.int32), 32, 4)
    negative = torch.tensor([50, -5, 70], dtype=torch.int32)
    if on_npu_kernels(negative):  # lengths are read by the kernel: a negative one counts as 0 (docs/MIGRATION.md)
        got = dg.fp8_fp4_paged_mqa_logits(qp, cache, w, negative, table, meta, width, True)
        want = dg.fp8_fp4_paged_mqa_logits(qp, cache, w, upstream_lengths([50, 0, 70], 2), table, meta, width, True)
        assert torch.equal(got.view(torch.int32), want.view(torch.int32)) and torch.isneginf(got[2:4]).all()
    else:
        with pytest.raises(ValueError, match=r"^context_lens: row 2 has length -5"):
            dg.fp8_fp4_paged_mqa_logits(qp, cache, w, negative, table, meta, width, True)


def test_1d_context_lens_with_varlen_indices():
    """The varlen form needs next_n 1, where a 1-D length is the row's length: the [B, 1] call bit for bit."""
    qp, cache, w, table, _, _, width = paged_inputs(False, 1, seed=5)
    lens_1d, idx = torch.tensor([70, 3, 96], dtype=torch.int32), torch.arange(3, dtype=torch.int32)
    got = paged(qp, cache, w, lens_1d, table, width, True, indices=idx)
    want = paged(qp, cache, w, lens_1d[:, None].contiguous(), table, width, True, indices=idx)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32)) and got[:, :3].isfinite().all()
    qp2, cache2, w2, table2, _, _, _ = paged_inputs(False, 2, seed=5)
    with pytest.raises(ValueError, match="^indices: varlen mode needs next_n == 1"):
        paged(qp2, cache2, w2, lens_1d, table2, width, True, indices=idx)


@pytest.mark.parametrize("gran_k", [32, 128])
def test_four_argument_packer_is_the_call_without_psum_layout(gran_k):
    torch.manual_seed(8)
    ks, mn = [4 * gran_k, 0, 3 * gran_k - 5, 9 * gran_k], 12
    _, sf = random_exponents((sum((k + gran_k - 1) // gran_k for k in ks), mn))
    layout = torch.tensor(ks, dtype=torch.int32)
    fn = utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    got = fn(sf, layout, ks, gran_k)
    assert (got != 0).any() and torch.equal(got, k_grouped_reference(sf, ks, gran_k))
    for k_alignment in (32, 128, 160):  # not read without the psum layout
        assert torch.equal(got, fn(sf, layout, ks, gran_k, k_alignment))
        assert torch.equal(got, fn(sf, layout, ks, gran_k, k_alignment, use_psum_layout=False))
    assert torch.equal(got, dg.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, layout, ks, gran_k))


def test_three_argument_packer_has_gran_k_128():
    torch.manual_seed(9)
    ks, mn = [512, 384, 0, 1152], 8
    _, sf = random_exponents((sum((k + 127) // 128 for k in ks), mn))
    layout = torch.tensor(ks, dtype=torch.int32)
    fn = utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    got = fn(sf, layout, ks)
    assert (got != 0).any() and torch.equal(got, fn(sf, layout, ks, 128, 128))
    with pytest.raises(ValueError, match=r"^sf: expected .* \(sum of ceil\(k / 128\)\)"):
        fn(torch.cat([sf, sf, sf, sf]), layout, ks)  # scales of gran_k 32 need gran_k


def test_psum_layout_without_k_alignment_is_refused():
    torch.manual_seed(10)
    _, sf = random_exponents((8, 8))
    ends = torch.tensor([100, 256], dtype=torch.int32)
    fn = utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    for call in (lambda: fn(sf, ends, None, 32, use_psum_layout=True),
                 lambda: fn(sf, ends, [100, 128], 32, None, True)):
        with pytest.raises(ValueError, match=r"^k_alignment: needed with use_psum_layout=True.*pass k_alignment"):
            call()
    assert fn(sf, ends, None, 32, 128, True).shape == ((8 + 3 * 2) // 4, 8)
