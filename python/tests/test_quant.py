"""Quantisation helpers (deepgemm_ascend.utils.math) against independent element-wise references."""
import math

import pytest
import torch

from deepgemm_ascend import utils

FP8_MAX, FP4_MAX = 448.0, 6.0
FP4_GRID = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
FP4X2 = getattr(torch, "float4_e2m1fn_x2", None)


def f32(v):
    """Rounds a Python float to fp32."""
    return torch.tensor(v, dtype=torch.float32).item()


def ref_pow2_ceil(v):
    """Smallest power of two >= v (v > 0) with the biased exponent clamped to [1, 254]."""
    if v <= 2.0 ** -126:
        return 2.0 ** -126
    mant, exp = math.frexp(v)  # v = mant * 2**exp, mant in [0.5, 1)
    p = exp - 1 if mant == 0.5 else exp
    return 2.0 ** min(p, 127)


def ref_scale(amax, fmt_max, ue8m0):
    s = f32(f32(max(amax, 1e-4)) / fmt_max)
    return ref_pow2_ceil(s) if ue8m0 else s


def ref_fp4_code(v):
    code = sum(1 for t in (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0) if abs(v) > t)
    return code | (8 if v < 0 and code else 0)


def ref_unpack_fp4(packed):
    """Packed bytes [m, c] -> list of code rows [m][2c] (low nibble = even element)."""
    b = packed.view(torch.uint8).tolist()
    return [[(byte >> (4 * h)) & 0xF for byte in row for h in (0, 1)] for row in b]


def ref_fp4_value(code):
    return (-1.0 if code & 8 else 1.0) * FP4_GRID[code & 7]


def ref_token_scales(x, gk, fmt_max, ue8m0):
    xf = x.float()
    m, n = xf.shape
    return [[ref_scale(xf[r, b * gk:(b + 1) * gk].abs().max().item(), fmt_max, ue8m0)
             for b in range((n + gk - 1) // gk)] for r in range(m)]


def assert_fp8_close(q, sf_rows, x, row_block, col_block):
    """|q * sf - x| <= 2^-4 * amax of the element's scale block, element by element."""
    deq, xf = q.float(), x.float()
    for r in range(xf.shape[0]):
        for c in range(xf.shape[1]):
            br, bc = r // row_block, c // col_block
            block = xf[br * row_block:(br + 1) * row_block, bc * col_block:(bc + 1) * col_block]
            amax = block.abs().max().item()
            assert abs(deq[r, c].item() * sf_rows[br][bc] - xf[r, c].item()) <= 2 ** -4 * amax + 1e-30


# ------------------------------------------------------------------------------------------------
# UE8M0

def test_ceil_to_ue8m0_matches_reference():
    vals = [1.0, 0.75, 1.5, 2.0 ** -20, 3 * 2.0 ** -20, 448.0, 1e-4 / 448, 6.1e-5, 1e-40, 3e38, 0.0]
    vals += (torch.rand(200, dtype=torch.float64) * 2.0 ** torch.randint(-40, 40, (200,))).tolist()
    x = torch.tensor(vals, dtype=torch.float32)
    out = utils.ceil_to_ue8m0(x)
    assert out.dtype == torch.float32
    for v, o in zip(x.tolist(), out.tolist()):
        assert o == ref_pow2_ceil(v), v


@pytest.mark.parametrize("sk", [1, 3, 4, 5, 8, 9])
def test_pack_ue8m0_to_int_bytes_and_round_trip(sk):
    exps = torch.randint(-30, 30, (3, sk))
    sf = torch.pow(2.0, exps.double()).float()
    packed = utils.pack_ue8m0_to_int(sf)
    assert packed.dtype == torch.int32 and packed.shape == (3, (sk + 3) // 4)
    for r in range(3):
        for j in range(packed.shape[1]):
            want = sum((int(exps[r, 4 * j + t]) + 127) << (8 * t) for t in range(4) if 4 * j + t < sk)
            assert int(packed[r, j]) & 0xFFFFFFFF == want
    assert torch.equal(utils.unpack_ue8m0_from_int(packed, sk), sf)
    assert utils.unpack_ue8m0_from_int(packed).shape == (3, 4 * packed.shape[1])


def test_unpack_special_bytes_and_errors():
    out = utils.unpack_ue8m0_from_int(torch.tensor([0x7F01FE00], dtype=torch.int32), 4)
    assert out[0].item() == 2.0 ** -127 and out[1].item() == 2.0 ** 127
    assert out[2].item() == 2.0 ** -126 and out[3].item() == 1.0
    with pytest.raises(TypeError, match="^packed: "):
        utils.unpack_ue8m0_from_int(torch.zeros(2, dtype=torch.int16), 2)
    with pytest.raises(ValueError, match="^sk: "):
        utils.unpack_ue8m0_from_int(torch.zeros(2, dtype=torch.int32), 9)
    with pytest.raises(TypeError, match="^sf: "):
        utils.pack_ue8m0_to_int(torch.zeros(2, dtype=torch.int64))


# ------------------------------------------------------------------------------------------------
# FP8

@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("m,n,gk", [(4, 128, 128), (3, 300, 128), (5, 100, 32), (2, 1, 128), (1, 257, 32)])
def test_per_token_cast_to_fp8(m, n, gk, use_ue8m0, dtype):
    x = (torch.randn(m, n) * 3).to(dtype)
    q, sf = utils.per_token_cast_to_fp8(x, use_ue8m0, gran_k=gk)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (m, n) and q.is_contiguous()
    ref = ref_token_scales(x, gk, FP8_MAX, use_ue8m0)
    assert sf.dtype == torch.float32 and sf.tolist() == ref
    assert_fp8_close(q, ref, x, 1, gk)
    if not use_ue8m0:  # the block maximum maps onto the largest FP8 value
        for r in range(m):
            for b in range(sf.shape[1]):
                assert q[r, b * gk:(b + 1) * gk].float().abs().max().item() == FP8_MAX
    else:
        assert all(math.frexp(s)[0] == 0.5 for row in ref for s in row)
        q2, packed = utils.per_token_cast_to_fp8(x, True, gran_k=gk, use_packed_ue8m0=True)
        assert torch.equal(q2.view(torch.uint8), q.view(torch.uint8))
        assert packed.dtype == torch.int32 and packed.shape == (m, (sf.shape[1] + 3) // 4)
        assert torch.equal(packed, utils.pack_ue8m0_to_int(sf))
        assert torch.equal(utils.unpack_ue8m0_from_int(packed, sf.shape[1]), sf)
        assert torch.equal(utils.dequant_fp8(q, packed, 1, gk), utils.dequant_fp8(q, sf, 1, gk))


@pytest.mark.parametrize("use_ue8m0", [False, True])
def test_per_channel_cast_to_fp8(use_ue8m0):
    gk, m, n = 32, 64, 5
    x = torch.randn(m, n, dtype=torch.bfloat16)
    q, sf = utils.per_channel_cast_to_fp8(x, use_ue8m0, gran_k=gk)
    assert q.shape == (m, n) and sf.shape == (m // gk, n)
    ref = ref_token_scales(x.T.contiguous(), gk, FP8_MAX, use_ue8m0)  # [n][m/gk]
    assert sf.T.tolist() == ref
    assert_fp8_close(q, sf.tolist(), x, gk, 1)
    assert torch.equal(utils.dequant_fp8(q, sf, gk, 1), q.float() * sf.repeat_interleave(gk, 0))
    with pytest.raises(ValueError, match="^x: "):
        utils.per_channel_cast_to_fp8(torch.randn(65, 4), use_ue8m0, gran_k=gk)


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("m,n,gk", [(128, 128, 128), (200, 150, 128), (40, 70, 32)])
def test_per_block_cast_to_fp8(m, n, gk, use_ue8m0):
    x = torch.randn(m, n, dtype=torch.bfloat16)
    q, sf = utils.per_block_cast_to_fp8(x, use_ue8m0, gran_k=gk)
    mb, nb = (m + gk - 1) // gk, (n + gk - 1) // gk
    assert q.shape == (m, n) and sf.shape == (mb, nb)
    xf = x.float()
    ref = [[ref_scale(xf[i * gk:(i + 1) * gk, j * gk:(j + 1) * gk].abs().max().item(), FP8_MAX, use_ue8m0)
            for j in range(nb)] for i in range(mb)]
    assert sf.tolist() == ref
    assert_fp8_close(q, ref, x, gk, gk)
    deq = utils.dequant_fp8(q, sf, gk, gk)
    assert deq[m - 1, n - 1].item() == f32(q[m - 1, n - 1].float().item() * ref[mb - 1][nb - 1])


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dims", [(0,), (0, 2), (-1,)])
def test_per_custom_dims_cast_to_fp8(dims, use_ue8m0):
    x = torch.randn(4, 3, 5, dtype=torch.bfloat16)
    q, sf = utils.per_custom_dims_cast_to_fp8(x, dims, use_ue8m0)
    assert q.shape == x.shape and q.dtype == torch.float8_e4m3fn
    keep = sorted(d % 3 for d in dims)
    xf = x.float()
    for idx in torch.cartesian_prod(*[torch.arange(x.shape[d]) for d in range(3)]).tolist():
        sel = [idx[d] if d in keep else slice(None) for d in range(3)]
        s = ref_scale(xf[tuple(sel)].abs().max().item(), FP8_MAX, use_ue8m0)
        assert sf[tuple(idx[d] for d in keep)].item() == s
        v = xf[tuple(idx)].item()
        assert abs(q[tuple(idx)].float().item() * s - v) <= 2 ** -4 * xf[tuple(sel)].abs().max().item()
    kv = torch.randn(6, 16)
    _, kv_sf = utils.per_custom_dims_cast_to_fp8(kv, (0,), False)
    assert kv_sf.shape == (6,)


def test_dequant_fp8_partial_blocks_and_errors():
    q = torch.randn(3, 70).to(torch.float8_e4m3fn)
    sf = torch.tensor([[2.0, 4.0, 0.5]] * 2, dtype=torch.float32)  # gran_mn 2 -> 2 rows, K 70/32 -> 3
    out = utils.dequant_fp8(q, sf, 2, 32)
    for r in range(3):
        for c in range(70):
            assert out[r, c].item() == q[r, c].float().item() * sf[r // 2, c // 32].item()
    with pytest.raises(ValueError, match="^sf: "):
        utils.dequant_fp8(q, sf[:, :2], 2, 32)
    with pytest.raises(TypeError, match="^sf: "):
        utils.dequant_fp8(q, sf.half(), 2, 32)
    with pytest.raises(TypeError, match="^q: "):
        utils.dequant_fp8(torch.zeros(3, 70, dtype=torch.int32), sf, 2, 32)


def test_quantiser_argument_errors():
    x = torch.randn(4, 64)
    with pytest.raises(TypeError, match="^x: "):
        utils.per_token_cast_to_fp8(x.to(torch.int32), False)
    with pytest.raises(TypeError, match="^x: "):
        utils.per_token_cast_to_fp8(x.tolist(), False)
    with pytest.raises(ValueError, match="^x: "):
        utils.per_token_cast_to_fp8(x[None], False)
    with pytest.raises(TypeError, match="^use_ue8m0: "):
        utils.per_block_cast_to_fp8(x, None)
    with pytest.raises(ValueError, match="^gran_k: "):
        utils.per_token_cast_to_fp8(x, False, gran_k=0)
    with pytest.raises(ValueError, match="^use_packed_ue8m0: "):
        utils.per_token_cast_to_fp8(x, False, use_packed_ue8m0=True)
    with pytest.raises(ValueError, match="^use_packed_ue8m0: "):
        utils.per_token_cast_to_fp4(x, False, use_packed_ue8m0=True)
    with pytest.raises(ValueError, match="^x: "):
        utils.per_token_cast_to_fp4(torch.randn(4, 63), True)
    with pytest.raises(ValueError, match="^dims: "):
        utils.per_custom_dims_cast_to_fp8(x, (2,), False)


# ------------------------------------------------------------------------------------------------
# FP4

def test_fp4_tie_cases_and_sign():
    # amax 6 with use_ue8m0=False gives sf == 1 exactly, so the codes are those of the raw values.
    vals = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, -0.25, -0.1, -0.26, 0.74, 0.76, -5.0, -5.01, 0.0]
    x = torch.tensor([vals], dtype=torch.float32)
    packed, sf = utils.per_token_cast_to_fp4(x, False, gran_k=16)
    assert sf.tolist() == [[1.0]] and packed.dtype == torch.int8 and packed.shape == (1, 8)
    codes = ref_unpack_fp4(packed)[0]
    assert codes == [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 9, 1, 2, 14, 15, 0]
    assert codes == [ref_fp4_code(v) for v in vals]
    assert int(packed.view(torch.uint8)[0, 0]) == 0x10  # element 0 low nibble, element 1 high nibble


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("m,n,gk", [(3, 64, 32), (2, 100, 32), (4, 256, 128), (1, 2, 128)])
def test_per_token_cast_to_fp4(m, n, gk, use_ue8m0):
    x = torch.randn(m, n, dtype=torch.bfloat16) * 4
    packed, sf = utils.per_token_cast_to_fp4(x, use_ue8m0, gran_k=gk)
    assert packed.dtype == torch.int8 and packed.shape == (m, n // 2)
    ref = ref_token_scales(x, gk, FP4_MAX, use_ue8m0)
    assert sf.tolist() == ref
    codes = ref_unpack_fp4(packed)
    xf = x.float()
    for r in range(m):
        for c in range(n):
            s = ref[r][c // gk]
            assert codes[r][c] == ref_fp4_code(f32(xf[r, c].item() * f32(1.0 / s))), (r, c)
            assert codes[r][c] != 8  # no negative zero
            nearest = min(abs(abs(xf[r, c].item()) / s - g) for g in FP4_GRID)
            assert abs(abs(ref_fp4_value(codes[r][c])) - abs(xf[r, c].item()) / s) <= nearest + 1e-6
    back = utils.cast_back_from_fp4(packed, sf, gran_k=gk)
    want = torch.tensor([[ref_fp4_value(codes[r][c]) * ref[r][c // gk] for c in range(n)] for r in range(m)])
    assert back.dtype == torch.float32 and torch.equal(back, want)
    if use_ue8m0:
        p2, packed_sf = utils.per_token_cast_to_fp4(x, True, gran_k=gk, use_packed_ue8m0=True)
        assert torch.equal(p2, packed)
        sk = sf.shape[1]
        assert packed_sf.shape == (m, (sk + 3) // 4)
        for j in range(sk, 4 * packed_sf.shape[1]):  # tail padded with 1.0 = exponent 127
            assert all((int(w) >> (8 * (j % 4))) & 0xFF == 127 for w in packed_sf[:, j // 4])
        assert torch.equal(utils.unpack_ue8m0_from_int(packed_sf, sk), sf)
        assert torch.equal(utils.cast_back_from_fp4(packed, packed_sf, gk, use_packed_ue8m0=True), back)
        assert torch.equal(utils.dequant_fp4(packed, packed_sf, 1, gk), back)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8] + ([FP4X2] if FP4X2 else []))
def test_transpose_packed_fp4(dtype):
    m, n = 6, 10
    packed = torch.randint(0, 256, (m, n // 2), dtype=torch.uint8).view(dtype)
    t = utils.transpose_packed_fp4(packed)
    assert t.dtype == dtype and t.shape == (n, m // 2)
    codes, tcodes = ref_unpack_fp4(packed), ref_unpack_fp4(t)
    assert all(tcodes[c][r] == codes[r][c] for r in range(m) for c in range(n))
    assert torch.equal(utils.transpose_packed_fp4(t).view(torch.uint8), packed.view(torch.uint8))
    with pytest.raises(ValueError, match="^packed: "):
        utils.transpose_packed_fp4(packed[:5])
    with pytest.raises(TypeError, match="^packed: "):
        utils.transpose_packed_fp4(torch.zeros(4, 2, dtype=torch.int16))


def test_fp4_random_codes_never_negative_zero():
    packed, _ = utils.per_token_cast_to_fp4(torch.randn(16, 512) * 0.01 - 0.001, True, gran_k=32)
    codes = torch.tensor(ref_unpack_fp4(packed))
    assert not bool((codes == 8).any()) and bool((codes > 8).any())


def test_cast_back_from_fp4_errors():
    packed, sf = utils.per_token_cast_to_fp4(torch.randn(2, 64), True, gran_k=32)
    with pytest.raises(TypeError, match="^sf: "):
        utils.cast_back_from_fp4(packed, sf, 32, use_packed_ue8m0=True)
    with pytest.raises(ValueError, match="^sf: "):
        utils.cast_back_from_fp4(packed, sf[:, :1], 32)
