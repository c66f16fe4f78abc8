"""Lightning-indexer MQA logits against float64 references (dequantised inputs and bf16 inputs)."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.runtime import on_npu_kernels
from deepgemm_ascend.testing import calc_diff


def ranges(s, skv, kind):
    if kind == "causal":                      # (a) ks = 0, ke[i] = i + SKV - S
        ks = torch.zeros(s, dtype=torch.int32)
        ke = torch.arange(s, dtype=torch.int32) + (skv - s)
    else:                                     # random windows, some empty
        ks = torch.randint(0, skv, (s,), dtype=torch.int32)
        ke = torch.minimum(ks + torch.randint(0, skv // 2 + 1, (s,), dtype=torch.int32), torch.tensor(skv))
        ke = ke.to(torch.int32)
    return ks, ke


def reference(qd, kvd, w, ks, ke):
    """[S, SKV] float64 logits on valid entries, -inf elsewhere."""
    scores = torch.einsum("shd,td->sht", qd, kvd).clamp(min=0)
    logits = (scores * w.double()[:, :, None]).sum(1)
    j = torch.arange(kvd.shape[0])
    valid = (j[None, :] >= ks[:, None]) & (j[None, :] < ke[:, None])
    return logits.masked_fill(~valid, float("-inf")), valid


def fp8_inputs(s, h, d, skv):
    q, kv = torch.randn(s, h, d), torch.randn(skv, d)
    q8 = q.to(torch.float8_e4m3fn)
    kv8, sf = dg.per_custom_dims_cast_to_fp8(kv, (0,), False)
    return q, kv, (q8, None), (kv8, sf), q8.double(), kv8.double() * sf.double()[:, None]


def fp4_inputs(s, h, d, skv):
    """As fp8_inputs with packed FP4 q and kv (UE8M0 per 32 values, four packed per int32 row word)."""
    q, kv = torch.randn(s, h, d), torch.randn(skv, d)
    q4, sq = dg.per_token_cast_to_fp4(q.view(s * h, d), True, gran_k=32, use_packed_ue8m0=True)
    kv4, skv4 = dg.per_token_cast_to_fp4(kv, True, gran_k=32, use_packed_ue8m0=True)
    qd = dg.cast_back_from_fp4(q4, sq, gran_k=32, use_packed_ue8m0=True).double().view(s, h, d)
    kvd = dg.cast_back_from_fp4(kv4, skv4, gran_k=32, use_packed_ue8m0=True).double()
    return q, kv, (q4.view(s, h, d // 2), sq.view(s, h)), (kv4, skv4.view(skv)), qd, kvd


def assert_compressed(out, ref, ks, ke, tol):
    """Row i of compressed logits holds the reference's columns [ks[i], ke[i]) from column 0."""
    for i in range(out.shape[0]):
        n = int(ke[i] - ks[i])
        if n:
            assert calc_diff(out[i, :n].double(), ref[i, int(ks[i]):int(ke[i])]) < tol, i


@pytest.mark.parametrize("h,d", [(32, 128), (64, 64), (8, 32)])
@pytest.mark.parametrize("kind", ["causal", "windows"])
@pytest.mark.parametrize("logits_dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_fp8_mode(h, d, kind, logits_dtype):
    torch.manual_seed(h + d)
    s, skv = 37, 300
    q, kv, qp, kvp, qd, kvd = fp8_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = ranges(s, skv, kind)
    out = dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke, logits_dtype=logits_dtype)
    assert out.shape == (s, skv) and out.dtype == logits_dtype
    assert out.stride(0) % (1024 // out.element_size()) == 0 and out.stride(0) >= skv + 256
    ref, valid = reference(qd, kvd, w, ks, ke)
    assert torch.equal(torch.isinf(out) & (out < 0), ~valid), "-inf pattern must equal the reference mask"
    if valid.any():
        tol = 5e-6 if logits_dtype == torch.float32 else 3e-5
        assert calc_diff(out[valid], ref[valid]) < tol
        bf16_ref, _ = reference(q.bfloat16().double(), kv.bfloat16().double(), w, ks, ke)
        assert calc_diff(out[valid], bf16_ref[valid]) < 1e-3


def test_fp4_mode():
    torch.manual_seed(11)
    s, h, d, skv = 20, 16, 128, 200
    q, kv, qp, kvp, qd, kvd = fp4_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = ranges(s, skv, "causal")
    out = dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke)
    ref, valid = reference(qd, kvd, w, ks, ke)
    assert calc_diff(out[valid], ref[valid]) < 5e-6
    bf16_ref, _ = reference(q.bfloat16().double(), kv.bfloat16().double(), w, ks, ke)
    assert calc_diff(out[valid], bf16_ref[valid]) < 2e-2


def test_compressed_mode_and_legacy_name():
    torch.manual_seed(12)
    s, h, d, skv = 16, 32, 64, 256
    _, _, qp, kvp, qd, kvd = fp8_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = ranges(s, skv, "windows")
    width = int((ke - ks).max()) + 3
    out = dg.fp8_mqa_logits(qp[0], kvp, w, ks, ke, clean_logits=False, max_seqlen_k=width)
    assert out.shape == (s, width)
    ref, _ = reference(qd, kvd, w, ks, ke)
    assert_compressed(out, ref, ks, ke, 5e-6)


def test_compressed_fp4_bf16_logits_eight_heads():
    # 8 heads: two queries per 16-row tile in normal mode; compressed mode takes one query per problem.
    torch.manual_seed(14)
    s, h, d, skv = 21, 8, 64, 320
    _, _, qp, kvp, qd, kvd = fp4_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = ranges(s, skv, "windows")
    ke[0] = ks[0]  # an empty row
    width = int((ke - ks).max()) + 5
    out = dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke, clean_logits=False, max_seqlen_k=width,
                                logits_dtype=torch.bfloat16)
    assert out.shape == (s, width) and out.dtype == torch.bfloat16
    ref, _ = reference(qd, kvd, w, ks, ke)
    assert_compressed(out, ref, ks, ke, 3e-5)


def test_deterministic_over_repeated_calls():
    """20 calls on the host's threads; 3 on the instruction model (it runs the cores in a fixed order, and a
    call there takes a second)."""
    torch.manual_seed(13)
    s, h, d, skv = 24, 64, 128, 512
    _, _, qp, kvp, _, _ = fp8_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = ranges(s, skv, "causal")
    first = dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke).clone()
    for _ in range(2 if on_npu_kernels(w) else 19):
        assert torch.equal(dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke), first)


def test_errors():
    s, h, d, skv = 4, 8, 32, 64
    _, _, qp, kvp, _, _ = fp8_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = torch.zeros(s, dtype=torch.int32), torch.full((s,), skv, dtype=torch.int32)
    if not on_npu_kernels(ks):  # the NPU kernel reads the ranges on the device (docs/MIGRATION.md)
        with pytest.raises(ValueError, match=r"^cu_seq_len_k_end: row 0 ends at 65, beyond SKV"):
            dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke + 1)
        with pytest.raises(ValueError, match=r"^cu_seq_len_k_end: row 0 has the range \[5, 2\)"):
            dg.fp8_fp4_mqa_logits(qp, kvp, w, ks + 5, ke - 62)
    with pytest.raises(TypeError, match=r"^q: expected dtype float8_e4m3fn"):
        dg.fp8_fp4_mqa_logits((qp[0].float(), None), kvp, w, ks, ke)
    with pytest.raises(TypeError, match=r"^cu_seq_len_k_start: expected dtype int32"):
        dg.fp8_fp4_mqa_logits(qp, kvp, w, ks.long(), ke)
    with pytest.raises(ValueError, match=r"^clean_logits"):
        dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke, clean_logits=True, max_seqlen_k=64)
    with pytest.raises(ValueError, match=r"^q: heads"):
        dg.fp8_fp4_mqa_logits((qp[0][:, :6].contiguous(), None), kvp, w[:, :6].contiguous(), ks, ke)


def test_production_heads_and_long_kv():
    # H = 64, D = 128 against a long KV (the float64 reference bounds the size we can check here).
    torch.manual_seed(14)
    s, h, d, skv = 64, 64, 128, 4096
    _, _, qp, kvp, qd, kvd = fp8_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = ranges(s, skv, "causal")
    out = dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke)
    ref, valid = reference(qd, kvd, w, ks, ke)
    assert calc_diff(out[valid], ref[valid]) < 5e-6
    assert torch.equal(torch.isinf(out), ~valid)


def test_single_query_row():
    torch.manual_seed(15)
    _, _, qp, kvp, qd, kvd = fp8_inputs(1, 32, 128, 1000)
    w = torch.randn(1, 32)
    ks, ke = torch.tensor([100], dtype=torch.int32), torch.tensor([900], dtype=torch.int32)
    out = dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke)
    ref, valid = reference(qd, kvd, w, ks, ke)
    assert calc_diff(out[valid], ref[valid]) < 5e-6


def test_kv_of_16384_rows():
    torch.manual_seed(16)
    s, h, d, skv = 8, 32, 128, 16384
    _, _, qp, kvp, qd, kvd = fp8_inputs(s, h, d, skv)
    w = torch.randn(s, h)
    ks, ke = ranges(s, skv, "windows")
    out = dg.fp8_fp4_mqa_logits(qp, kvp, w, ks, ke)
    ref, valid = reference(qd, kvd, w, ks, ke)
    assert calc_diff(out[valid], ref[valid]) < 5e-6
    assert torch.equal(torch.isinf(out), ~valid)
