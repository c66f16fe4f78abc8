"""BF16 einsum against float64 references."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff, poison_


@pytest.mark.parametrize("h,r,dd", [(8, 512, 128), (4, 96, 200)])
@pytest.mark.parametrize("batch", [1, 4, 33])
def test_bhr_hdr_bhd(h, r, dd, batch):
    torch.manual_seed(batch + h)
    a = torch.randn(batch, h, r).bfloat16()
    b_full = torch.randn(h, dd, r + 128).bfloat16()
    b = b_full[:, :, :r]                     # sliced B, as upstream's tests pass it
    d = poison_(torch.empty(batch, h, dd, dtype=torch.bfloat16))
    dg.einsum("bhr,hdr->bhd", a, b, d)
    assert calc_diff(d, torch.einsum("bhr,hdr->bhd", a.double(), b.double())) < 1e-5


@pytest.mark.parametrize("batch", [1, 16])
def test_bhd_hdr_bhr(batch):
    torch.manual_seed(batch)
    h, dd, r = 8, 128, 256
    a, b = torch.randn(batch, h, dd).bfloat16(), torch.randn(h, dd, r).bfloat16()
    d = poison_(torch.empty(batch, h, r, dtype=torch.bfloat16))
    dg.einsum("bhd,hdr->bhr", a, b, d)
    assert calc_diff(d, torch.einsum("bhd,hdr->bhr", a.double(), b.double())) < 1e-5


def test_every_element_within_one_bf16_ulp_of_float64():
    # A bf16 output cannot meet calc_diff 1e-10 against float64 (its own rounding is ~1e-6); what it can
    # do is land on the float64 result rounded to bf16, or one ulp from it (fp32 summation order).
    torch.manual_seed(3)
    a, b = torch.randn(32, 8, 512).bfloat16(), torch.randn(8, 128, 512).bfloat16()
    d = torch.empty(32, 8, 128, dtype=torch.bfloat16)
    dg.einsum("bhr,hdr->bhd", a, b, d)
    ref = torch.einsum("bhr,hdr->bhd", a.double(), b.double())
    ulp = 2.0 ** (torch.floor(torch.log2(ref.abs().clamp(min=1e-30))) - 7)
    assert ((d.double() - ref).abs() <= ulp).all()


@pytest.mark.parametrize("s,m,n,k", [(3, 128, 384, 128), (5, 64, 64, 96)])
def test_bmk_bnk_mn(s, m, n, k):
    torch.manual_seed(s + m)
    a, b = torch.randn(s, m, k).bfloat16(), torch.randn(s, n, k).bfloat16()
    ref = torch.einsum("bmk,bnk->mn", a.double(), b.double())
    c = torch.randn(m, n)
    d = c.clone()
    dg.einsum("bmk,bnk->mn", a, b, d, d)
    assert calc_diff(d, ref + c.double()) < 1e-5
    d16 = poison_(torch.empty(m, n, dtype=torch.bfloat16))
    dg.einsum("bmk,bnk->mn", a, b, d16)
    assert calc_diff(d16, ref) < 1e-5


def test_errors():
    a, b = torch.randn(2, 4, 64).bfloat16(), torch.randn(4, 32, 64).bfloat16()
    d = torch.full((2, 4, 32), 7.0).bfloat16()
    with pytest.raises(ValueError, match=r"^expr: unsupported"):
        dg.einsum("ij,jk->ik", a, b, d)
    with pytest.raises(ValueError, match=r"^c: "):
        dg.einsum("bhr,hdr->bhd", a, b, d, d)
    with pytest.raises(TypeError, match=r"^a: expected dtype bfloat16"):
        dg.einsum("bhr,hdr->bhd", a.float(), b, d)
    with pytest.raises(ValueError, match=r"^b: contracted size mismatch"):
        dg.einsum("bhr,hdr->bhd", a, b[:, :, :32], d)
    d32 = torch.zeros(4, 32)
    with pytest.raises(ValueError, match=r"^c: a float32 d accumulates"):
        dg.einsum("bmk,bnk->mn", torch.randn(2, 4, 64).bfloat16(), torch.randn(2, 32, 64).bfloat16(), d32)
    assert (d.float() == 7).all()


def blocks(sf, sizes):
    """Expand block scales over the given per-dimension block sizes (dims of sf in order)."""
    for dim, size in enumerate(sizes):
        sf = sf.repeat_interleave(size, dim)
    return sf


@pytest.mark.parametrize("with_c", [False, True], ids=["no_c", "c"])
def test_fp8_bhr_hdr_bhd(with_c):
    torch.manual_seed(21)
    bsz, h, r, dd = 20, 4, 256, 192
    a, b = torch.randn(bsz, h, r), torch.randn(h, dd, r)
    qa, sa = dg.per_token_cast_to_fp8(a.view(bsz * h, r), False)
    qa, sa = qa.view(bsz, h, r), sa.view(bsz, h, -1)
    qb, sb = zip(*[dg.per_block_cast_to_fp8(b[i], False) for i in range(h)])
    qb, sb = torch.stack(qb), torch.stack(sb)
    d = poison_(torch.empty(bsz, h, dd, dtype=torch.bfloat16))
    c = torch.randn(bsz, h, dd).bfloat16() if with_c else None
    dg.fp8_einsum("bhr,hdr->bhd", (qa, sa), (qb, sb), d, c)
    deq_a = qa.double() * blocks(sa.double(), (1, 1, 128))[..., :r]
    deq_b = qb.double() * blocks(sb.double(), (1, 128, 128))[:, :dd, :r]
    c64 = c.double() if with_c else 0
    assert calc_diff(d, c64 + torch.einsum("bhr,hdr->bhd", deq_a, deq_b)) < 1e-5
    assert calc_diff(d, c64 + torch.einsum("bhr,hdr->bhd", a.double(), b.double())) < 1e-3


def test_fp8_bhd_hdr_bhr():
    torch.manual_seed(22)
    bsz, h, dd, r = 16, 2, 256, 384
    a, b = torch.randn(bsz, h, dd), torch.randn(h, dd, r)
    qa, sa = dg.per_token_cast_to_fp8(a.view(bsz * h, dd), False)
    qa, sa = qa.view(bsz, h, dd), sa.view(bsz, h, -1)
    qb, sb = zip(*[dg.per_block_cast_to_fp8(b[i], False) for i in range(h)])   # [d, r] blocks: [d/128, r/128]
    qb, sb = torch.stack(qb), torch.stack(sb)
    d = poison_(torch.empty(bsz, h, r))
    dg.fp8_einsum("bhd,hdr->bhr", (qa, sa), (qb, sb), d)
    deq_a = qa.double() * blocks(sa.double(), (1, 1, 128))
    deq_b = qb.double() * blocks(sb.double(), (1, 128, 128))
    assert calc_diff(d, torch.einsum("bhd,hdr->bhr", deq_a, deq_b)) < 1e-5


def test_fp8_bhd_bhr_hdr():
    torch.manual_seed(23)
    bsz, h, dd, r = 256, 3, 64, 96
    a, b = torch.randn(bsz, h, dd), torch.randn(bsz, h, r)
    qa, sa = dg.per_channel_cast_to_fp8(a.view(bsz, h * dd), False)
    qb, sb = dg.per_channel_cast_to_fp8(b.view(bsz, h * r), False)
    qa, sa, qb, sb = qa.view(bsz, h, dd), sa.view(-1, h, dd), qb.view(bsz, h, r), sb.view(-1, h, r)
    c = torch.randn(h, dd, r)
    d = c.clone()
    dg.fp8_einsum("bhd,bhr->hdr", (qa, sa), (qb, sb), d, d, recipe=(1, 1, 128))
    deq_a = qa.double() * blocks(sa.double(), (128, 1, 1))
    deq_b = qb.double() * blocks(sb.double(), (128, 1, 1))
    assert calc_diff(d, c.double() + torch.einsum("bhd,bhr->hdr", deq_a, deq_b)) < 1e-5
