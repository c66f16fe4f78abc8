"""No FP8 / FP4 call path reads a tensor's values in Python: on an NPU each such read (.item(),
.tolist(), bool() / int() / float() of a tensor, .nonzero()) stalls the stream until the kernels before it
finish. The scale checks and transforms run in C++ (host scales) or as tensor ops on the scales' device (NPU
kernels). Every such call on torch.Tensor is counted while one call of each entry point runs; the count must
be 0. The same calls run under DGA_BACKEND=npu-model, where the NPU kernels' scale layouts are built."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.runtime import on_npu_kernels

_READS = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__", "nonzero", "numpy")


@pytest.fixture
def reads(monkeypatch):
    """The names of the value-reading torch.Tensor methods called, in order (from outside the test's setup)."""
    seen = []
    for name in _READS:
        original = getattr(torch.Tensor, name)

        def counted(self, *args, _name=name, _original=original, **kwargs):
            seen.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counted)
    return seen


def fp8(x, gran_k=128, **kw):
    return dg.per_token_cast_to_fp8(x, use_ue8m0=gran_k == 32, gran_k=gran_k, **kw)


def inputs():
    torch.manual_seed(0)
    m, n, k = 96, 128, 256
    a, b = torch.randn(m, k), torch.randn(n, k)
    return m, n, k, a, b


def call_dense(variant):
    m, n, k, a, b = inputs()
    d = torch.empty(m, n, dtype=torch.bfloat16)
    if variant == "fp32 1x128 / 128x128":
        return lambda: dg.fp8_gemm_nt(fp8(a), dg.per_block_cast_to_fp8(b, False), d)
    if variant == "MX fp32 powers of two":
        return lambda: dg.fp8_fp4_gemm_nt(fp8(a, 32), fp8(b, 32), d, recipe=(1, 1, 32))
    if variant == "MX packed int32":
        return lambda: dg.fp8_fp4_gemm_nt(fp8(a, 32, use_packed_ue8m0=True), fp8(b, 32, use_packed_ue8m0=True), d,
                                          recipe=(1, 1, 32))
    if variant == "FP4 x FP4":
        qa = dg.per_token_cast_to_fp4(a, True, gran_k=32, use_packed_ue8m0=True)
        qb = dg.per_token_cast_to_fp4(b, True, gran_k=32, use_packed_ue8m0=True)
        return lambda: dg.fp8_fp4_gemm_nt(qa, qb, d, recipe=(1, 1, 32))
    if variant == "transposed nn":
        qb, sb = dg.per_channel_cast_to_fp8(b.T.contiguous(), True, gran_k=32)
        return lambda: dg.fp8_fp4_gemm_nn(fp8(a, 32), (qb, sb), d, recipe=(1, 1, 32))
    raise AssertionError(variant)


def call_grouped(variant):
    g, n, k, mmax = 3, 128, 256, 64
    alignment = dg.get_mk_alignment_for_contiguous_layout()
    b = torch.randn(g, n, k)
    qb, sb = zip(*(dg.per_block_cast_to_fp8(b[i], False) for i in range(g)))
    qb, sb = torch.stack(qb), torch.stack(sb)
    if variant == "contiguous ids":
        sizes = [alignment, 0, 2 * alignment]
        ids = torch.cat([torch.full((s,), i, dtype=torch.int32) for i, s in enumerate(sizes)])
        a = torch.randn(sum(sizes), k)
        d = torch.empty(a.shape[0], n, dtype=torch.bfloat16)
        return lambda: dg.m_grouped_fp8_gemm_nt_contiguous(fp8(a), (qb, sb), d, ids)
    if variant == "contiguous psum MX":
        ends = torch.tensor([40, alignment + 50, 2 * alignment + 30], dtype=torch.int32)
        a = torch.randn(2 * alignment + 30, k)
        d = torch.empty(a.shape[0], n, dtype=torch.bfloat16)
        qb32, sb32 = zip(*(fp8(b[i], 32) for i in range(g)))
        return lambda: dg.m_grouped_fp8_fp4_gemm_nt_contiguous(
            fp8(a, 32), (torch.stack(qb32), torch.stack(sb32)), d, ends, recipe=(1, 1, 32), use_psum_layout=True)
    if variant == "masked":
        a = torch.randn(g, mmax, k)
        qa, sa = zip(*(fp8(a[i]) for i in range(g)))
        d = torch.empty(g, mmax, n, dtype=torch.bfloat16)
        masked_m = torch.tensor([mmax, 0, 17], dtype=torch.int32)
        return lambda: dg.m_grouped_fp8_gemm_nt_masked((torch.stack(qa), torch.stack(sa)), (qb, sb), d, masked_m, 32)
    raise AssertionError(variant)


def call_k_grouped(variant):
    m, n = 64, 96
    alignment = dg.get_mk_alignment_for_contiguous_layout()
    ks = [alignment, 0, 2 * alignment]
    a, b = torch.randn(sum(ks), m), torch.randn(sum(ks), n)
    qa, sa = dg.per_channel_cast_to_fp8(a, False)
    qb, sb = dg.per_channel_cast_to_fp8(b, False)
    c = torch.randn(len(ks), m, n)
    d = torch.empty_like(c)
    if variant == "ks":
        return lambda: dg.k_grouped_fp8_gemm_tn_contiguous((qa, sa), (qb, sb), d, ks, c=c)
    if variant == "psum":
        ends = torch.tensor(list(__import__("itertools").accumulate(ks)), dtype=torch.int32)
        return lambda: dg.k_grouped_fp8_gemm_tn_contiguous((qa, sa), (qb, sb), d, None, ends, c=c,
                                                           use_psum_layout=True)
    raise AssertionError(variant)


def call_other(variant):
    if variant == "fp8_einsum":
        x, y = torch.randn(4, 64, 256), torch.randn(4, 128, 256)
        qx, sx = zip(*(fp8(x[i]) for i in range(4)))
        qy, sy = zip(*(dg.per_block_cast_to_fp8(y[i], False) for i in range(4)))
        d = torch.empty(4, 64, 128, dtype=torch.bfloat16)
        return lambda: dg.fp8_einsum("bhr,hdr->bhd", (torch.stack(qx).transpose(0, 1), torch.stack(sx).transpose(0, 1)),
                                     (torch.stack(qy), torch.stack(sy)), d.transpose(0, 1))
    if variant == "skip_head_mid":
        m, n, k, a, b = inputs()
        d = torch.empty(m, n + n // 64 * 32, dtype=torch.bfloat16)
        return lambda: dg.fp8_gemm_nt_skip_head_mid(fp8(a), fp8(b), d, (32, 32, 32), recipe=(1, 1, 128))
    if variant == "mqa_logits":
        s, h, dim, skv = 8, 8, 64, 40
        kv8, sf = dg.per_custom_dims_cast_to_fp8(torch.randn(skv, dim), (0,), False)
        q8 = torch.randn(s, h, dim).to(torch.float8_e4m3fn)
        ks = torch.zeros(s, dtype=torch.int32)
        ke = torch.arange(s, dtype=torch.int32) + skv - s
        return lambda: dg.fp8_fp4_mqa_logits((q8, None), (kv8, sf), torch.randn(s, h), ks, ke)
    if variant == "paged_mqa_logits":
        batch, h, dim, bkv, blocks = 2, 8, 64, 32, 3
        lens = torch.tensor([[40], [90]], dtype=torch.int32)
        cache = torch.zeros(batch * blocks, bkv, 1, dim + 4, dtype=torch.uint8)
        cache[..., :dim] = torch.randn(batch * blocks, bkv, 1, dim).to(torch.float8_e4m3fn).view(torch.uint8)
        cache[..., dim:] = torch.ones(batch * blocks, bkv, 1, 1).view(torch.uint8)  # fp32 scales 1.0
        table = torch.arange(batch * blocks, dtype=torch.int32).view(batch, blocks)
        q8 = torch.randn(batch, 1, h, dim).to(torch.float8_e4m3fn)
        meta = dg.get_paged_mqa_logits_metadata(lens, bkv, dg.get_num_ai_cores())
        return lambda: dg.fp8_fp4_paged_mqa_logits((q8, None), cache, torch.randn(batch, h), lens, table, meta,
                                                   blocks * bkv)
    if variant == "fp8_fp4_mega_moe":
        from deepgemm_ascend.testing import mega_moe as tm

        buf = dg.get_symm_buffer_for_mega_moe(None, 8, 16, 6, 256, 128)
        w = tm.make_weights(8, 256, 128, 0, 1)
        tm.fill_buffer(buf, tm.make_rank_inputs(16, 256, 8, 6, 0))
        y = torch.empty(16, 256, dtype=torch.bfloat16)
        return lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf)
    raise AssertionError(variant)


CASES = ([("dense", v) for v in ("fp32 1x128 / 128x128", "MX fp32 powers of two", "MX packed int32", "FP4 x FP4",
                                 "transposed nn")]
         + [("grouped", v) for v in ("contiguous ids", "contiguous psum MX", "masked")]
         + [("k_grouped", v) for v in ("ks", "psum")]
         + [("other", v) for v in ("fp8_einsum", "skip_head_mid", "mqa_logits", "paged_mqa_logits",
                                                  "fp8_fp4_mega_moe")])
_MAKERS = {"dense": call_dense, "grouped": call_grouped, "k_grouped": call_k_grouped, "other": call_other}


@pytest.mark.parametrize("family,variant", CASES, ids=[f"{f}-{v}" for f, v in CASES])
def test_an_fp8_fp4_call_reads_no_tensor_value_in_python(family, variant, reads):
    call = _MAKERS[family](variant)  # inputs and quantisation: outside the count
    del reads[:]
    call()
    assert reads == [], f"{family} {variant}: tensor values read in Python: {reads}"


def test_the_counter_sees_a_read(reads):
    """The fixture counts what it claims to: a read of a tensor value is seen."""
    t = torch.ones(3)
    del reads[:]
    bool(t.any()), t.tolist(), t.sum().item()
    assert reads == ["__bool__", "tolist", "item"]


def test_bad_host_scales_still_fail_in_one_pass(reads):
    """The C++ check that replaced the Python one reports the bad value (and reads nothing in Python)."""
    m, n, k, a, b = inputs()
    (qa, sa), (qb, sb) = fp8(a, 32), fp8(b, 32)
    sa[3, 1] = 0.75
    d = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
    del reads[:]
    with pytest.raises(ValueError, match=r"sfa: 1 of \d+ values are not a power of two \(first: sfa\[3, 1\] = 0.75\)"):
        dg.fp8_fp4_gemm_nt((qa, sa), (qb, sb), d, recipe=(1, 1, 32))
    assert reads == [] or on_npu_kernels(qa)
    assert torch.isnan(d.float()).all(), "d was written by a failed call"
