"""Paged MQA logits against float64 references over the same KV values."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.runtime import on_npu_kernels
from deepgemm_ascend.testing import calc_diff


def build_cache(kv_rows, block_kv, num_blocks, fp4):
    """Scatter [T, D] KV values (with per-row scales) into a random permutation of cache blocks."""
    d = kv_rows.shape[1]
    if fp4:
        vals, sf = dg.per_token_cast_to_fp4(kv_rows, True, gran_k=32, use_packed_ue8m0=True)
        deq = dg.cast_back_from_fp4(vals, sf, gran_k=32, use_packed_ue8m0=True).double()
        row_bytes, vals, sf_bytes = d // 2, vals.view(torch.uint8), sf.view(torch.uint8).reshape(-1, 4)
    else:
        vals, sf = dg.per_custom_dims_cast_to_fp8(kv_rows, (0,), False)
        deq = vals.double() * sf.double()[:, None]
        row_bytes, vals, sf_bytes = d, vals.view(torch.uint8), sf.view(torch.uint8).reshape(-1, 4)
    cache = torch.zeros(num_blocks, block_kv * (row_bytes + 4), dtype=torch.uint8)
    perm = torch.randperm(num_blocks)
    t = kv_rows.shape[0]
    for i in range(t // block_kv):
        blk = int(perm[i])
        cache[blk, :block_kv * row_bytes] = vals[i * block_kv:(i + 1) * block_kv].flatten()
        cache[blk, block_kv * row_bytes:] = sf_bytes[i * block_kv:(i + 1) * block_kv].flatten()
    return cache.view(num_blocks, block_kv, 1, row_bytes + 4), perm, deq


@pytest.mark.parametrize("fp4", [False, True], ids=["fp8", "fp4"])
@pytest.mark.parametrize("block_kv", [32, 64])
@pytest.mark.parametrize("next_n", [1, 3])
@pytest.mark.parametrize("clean", [False, True])
def test_paged(fp4, block_kv, next_n, clean):
    torch.manual_seed(block_kv + next_n + fp4)
    batch, h, d, max_blocks = 3, 16, 128 if fp4 else 64, 4
    ctx_max = max_blocks * block_kv
    lens = torch.randint(1, ctx_max + 1, (batch, next_n), dtype=torch.int32)
    lens[:, -1] = lens.max(dim=1).values
    kv_rows = torch.randn(batch * max_blocks * block_kv, d)
    cache, perm, deq = build_cache(kv_rows, block_kv, batch * max_blocks + 2, fp4)
    table = perm[:batch * max_blocks].view(batch, max_blocks).to(torch.int32)
    q = torch.randn(batch, next_n, h, d)
    if fp4:
        q4, sq = dg.per_token_cast_to_fp4(q.reshape(-1, d), True, gran_k=32, use_packed_ue8m0=True)
        qp = (q4.view(batch, next_n, h, d // 2), sq.view(batch, next_n, h))
        qd = dg.cast_back_from_fp4(q4, sq, gran_k=32, use_packed_ue8m0=True).double().view(batch, next_n, h, d)
    else:
        q8 = q.to(torch.float8_e4m3fn)
        qp, qd = (q8, None), q8.double()
    w = torch.randn(batch * next_n, h)
    meta = dg.get_paged_mqa_logits_metadata(lens, block_kv, dg.get_num_sms())
    out = dg.fp8_fp4_paged_mqa_logits(qp, cache, w, lens, table, meta, ctx_max, clean_logits=clean)
    assert out.shape == (batch * next_n, ctx_max)
    for b in range(batch):
        kv_b = deq[b * max_blocks * block_kv:(b + 1) * max_blocks * block_kv]
        for t in range(next_n):
            r, n = b * next_n + t, int(lens[b, t])
            scores = (qd[b, t] @ kv_b[:n].T).clamp(min=0)
            ref = (scores * w[r].double()[:, None]).sum(0)
            assert calc_diff(out[r, :n], ref) < 5e-6
            if clean:
                assert torch.isinf(out[r, n:]).all() and (out[r, n:] < 0).all()


def test_metadata_shape_and_bounds():
    lens = torch.tensor([[300], [1], [1000]], dtype=torch.int32)
    meta = dg.get_paged_mqa_logits_metadata(lens, 64, 4)
    assert meta.shape == (5, 2) and meta.dtype == torch.int32
    assert meta[-1, 0] == 3 and (meta[:, 0].diff() >= 0).all()
    with pytest.raises(ValueError, match="^context_lens: lengths must be >= 0, got -5"):
        dg.get_paged_mqa_logits_metadata(torch.tensor([[300], [-5]], dtype=torch.int32), 64, 4)


@pytest.mark.parametrize("seed", range(4))
def test_metadata_balances_256_token_splits(seed):
    torch.manual_seed(seed)
    batch, sms = int(torch.randint(1, 12, ())), int(torch.randint(1, 24, ()))
    lens = torch.randint(0, 2000, (batch, 2), dtype=torch.int32)
    lens[0] = 0
    meta = dg.get_paged_mqa_logits_metadata(lens, 64, sms)
    units = [(b, u) for b in range(batch) for u in range((int(lens[b].max()) + 255) // 256)]
    for s in range(sms + 1):
        first = len(units) if s == sms else min(len(units), -(-len(units) * s // sms))
        want = list(units[first]) if first < len(units) else ([batch, 0] if units else [0, 0])
        assert meta[s].tolist() == want, (s, meta[s], want)


def test_errors():
    batch, h, d, bkv = 1, 8, 64, 32
    cache = torch.zeros(2, bkv, 1, d + 4, dtype=torch.uint8)
    q = torch.zeros(batch, 1, h, d).to(torch.float8_e4m3fn)
    w = torch.randn(batch, h)
    lens = torch.tensor([[40]], dtype=torch.int32)
    meta = dg.get_paged_mqa_logits_metadata(lens, bkv, dg.get_num_sms())
    if on_npu_kernels(lens):
        # The NPU kernel reads lengths and pages on the device (docs/MIGRATION.md): a page with a block id
        # outside the cache is not read (its columns below the length keep the prefill's 0), a length past
        # max_context_len is clamped to it.
        data, _, _ = build_cache(torch.randn(2 * bkv, d), bkv, 2, False)
        qr = torch.randn(batch, 1, h, d).to(torch.float8_e4m3fn)
        out = dg.fp8_paged_mqa_logits(qr, data, w, lens, torch.tensor([[0, 7]], dtype=torch.int32), meta, 64)
        assert (out[0, 32:40] == 0).all() and torch.isneginf(out[0, 40:]).all()
        assert out[0, :32].isfinite().all() and (out[0, :32] != 0).any()
        out = dg.fp8_paged_mqa_logits(qr, data, w, lens, torch.tensor([[0, 1]], dtype=torch.int32), meta, 32)
        assert out.shape == (1, 32) and out.isfinite().all() and (out != 0).any()
    else:
        with pytest.raises(ValueError, match=r"^block_table: entry \[0, 1\] = 7"):
            dg.fp8_paged_mqa_logits(q, cache, w, lens, torch.tensor([[0, 7]], dtype=torch.int32), meta, 64)
        with pytest.raises(ValueError, match=r"^context_lens: row 0 has length 40"):
            dg.fp8_paged_mqa_logits(q, cache, w, lens, torch.tensor([[0, 1]], dtype=torch.int32), meta, 32)
    with pytest.raises(ValueError, match=r"^schedule_meta"):
        dg.fp8_paged_mqa_logits(q, cache, w, lens, torch.tensor([[0, 1]], dtype=torch.int32), meta[:1], 64)
    with pytest.raises(ValueError, match=r"^kv_cache: block_kv"):
        dg.fp8_paged_mqa_logits(q, torch.zeros(2, 16, 1, d + 4, dtype=torch.uint8), w, lens,
                                torch.tensor([[0, 1]], dtype=torch.int32), meta, 64)


def test_batch_64_random_lengths():
    torch.manual_seed(31)
    batch, h, d, bkv, max_blocks = 64, 32, 128, 64, 3
    ctx_max = max_blocks * bkv
    lens = torch.randint(0, ctx_max + 1, (batch, 1), dtype=torch.int32)
    kv_rows = torch.randn(batch * max_blocks * bkv, d)
    cache, perm, deq = build_cache(kv_rows, bkv, batch * max_blocks, False)
    table = perm.view(batch, max_blocks).to(torch.int32)
    q8 = torch.randn(batch, 1, h, d).to(torch.float8_e4m3fn)
    w = torch.randn(batch, h)
    meta = dg.get_paged_mqa_logits_metadata(lens, bkv, dg.get_num_sms())
    out = dg.fp8_paged_mqa_logits(q8, cache, w, lens, table, meta, ctx_max, clean_logits=True)
    for b in range(batch):
        n = int(lens[b, 0])
        kv_b = deq[b * max_blocks * bkv:b * max_blocks * bkv + n]
        ref = ((q8[b, 0].double() @ kv_b.T).clamp(min=0) * w[b].double()[:, None]).sum(0)
        if n:
            assert calc_diff(out[b, :n], ref) < 5e-6
        assert torch.isinf(out[b, n:]).all()


@pytest.mark.parametrize("next_n", [1, 2])
def test_bf16_logits_are_the_fp32_logits_rounded_once(next_n):
    torch.manual_seed(7 + next_n)
    batch, h, d, bkv, max_blocks = 2, 32, 128, 64, 3
    ctx_max = max_blocks * bkv - 10
    lens = torch.randint(0, ctx_max + 1, (batch, next_n), dtype=torch.int32)
    cache, perm, _ = build_cache(torch.randn(batch * max_blocks * bkv, d), bkv, batch * max_blocks, False)
    table = perm.view(batch, max_blocks).to(torch.int32)
    q8 = torch.randn(batch, next_n, h, d).to(torch.float8_e4m3fn)
    w = torch.randn(batch * next_n, h)
    meta = dg.get_paged_mqa_logits_metadata(lens, bkv, dg.get_num_sms())
    args = ((q8, None), cache, w, lens, table, meta, ctx_max, True)
    f32 = dg.fp8_fp4_paged_mqa_logits(*args, logits_dtype=torch.float32)
    b16 = dg.fp8_fp4_paged_mqa_logits(*args, logits_dtype=torch.bfloat16)
    assert b16.dtype == torch.bfloat16 and (f32[:, :8] != 0).any()
    assert torch.equal(b16.view(torch.int16), f32.bfloat16().view(torch.int16))


@pytest.mark.parametrize("fp4", [False, True], ids=["fp8", "fp4"])
def test_bf16_weights_with_bf16_logits(fp4):
    """Upstream's bf16 weights (with bf16 logits only): the same logits as their fp32 values."""
    torch.manual_seed(11 + fp4)
    batch, next_n, h, d, bkv, max_blocks = 2, 2, 16, 128, 32, 3
    ctx_max = max_blocks * bkv
    lens = torch.randint(1, ctx_max + 1, (batch, next_n), dtype=torch.int32)
    cache, perm, _ = build_cache(torch.randn(batch * max_blocks * bkv, d), bkv, batch * max_blocks, fp4)
    table = perm.view(batch, max_blocks).to(torch.int32)
    q = torch.randn(batch, next_n, h, d)
    if fp4:
        q4, sq = dg.per_token_cast_to_fp4(q.reshape(-1, d), True, gran_k=32, use_packed_ue8m0=True)
        qp = (q4.view(batch, next_n, h, d // 2), sq.view(batch, next_n, h))
    else:
        qp = (q.to(torch.float8_e4m3fn), None)
    w16 = torch.randn(batch * next_n, h).bfloat16()
    meta = dg.get_paged_mqa_logits_metadata(lens, bkv, dg.get_num_sms())
    got = dg.fp8_fp4_paged_mqa_logits(qp, cache, w16, lens, table, meta, ctx_max, True, torch.bfloat16)
    want = dg.fp8_fp4_paged_mqa_logits(qp, cache, w16.float(), lens, table, meta, ctx_max, True, torch.bfloat16)
    assert torch.equal(got.view(torch.int16), want.view(torch.int16)) and torch.isfinite(got[:, :1].float()).all()
    with pytest.raises(TypeError, match="^weights: bfloat16 weights need bfloat16 logits"):
        dg.fp8_fp4_paged_mqa_logits(qp, cache, w16, lens, table, meta, ctx_max, True, torch.float32)
