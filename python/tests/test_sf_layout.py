"""Scale-factor layouts (deepgemm_ascend.utils.layout): bit-exact against explicit index loops,
round trips, pass-through without copies, the transform decision table and its errors."""
import pytest
import torch

from deepgemm_ascend import utils

E8M0 = getattr(torch, "float8_e8m0fnu", None)


def align(x, y):
    return (x + y - 1) // y * y


def random_exponents(shape, lo=-40, hi=40):
    """Biased UE8M0 exponents (ints in [87, 167]) and the fp32 powers of two they encode."""
    e = torch.randint(lo, hi, shape)
    return e + 127, torch.pow(2.0, e.double()).float()


def to_words(e):
    """Biased exponents [.., SK] -> int32 upstream words, packed by hand."""
    sk = e.shape[-1]
    words = torch.zeros(*e.shape[:-1], (sk + 3) // 4, dtype=torch.int64)
    flat_e, flat_w = e.reshape(-1, sk), words.view(-1, words.shape[-1])
    for r in range(flat_e.shape[0]):
        for j in range(sk):
            flat_w[r, j // 4] += int(flat_e[r, j]) << (8 * (j % 4))
    return torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)


def ref_ascend(e):
    """Biased exponents [G, MN, SK] -> the padded storage [G, ceil(SK/2), align(MN,16)] as int16."""
    g_count, mn, sk = e.shape
    cols, a = (sk + 1) // 2, align(mn, 16)
    store = [[[0] * a for _ in range(cols)] for _ in range(g_count)]
    for g in range(g_count):
        for r in range(mn):
            for j in range(cols):
                lo = int(e[g, r, 2 * j])
                hi = int(e[g, r, 2 * j + 1]) if 2 * j + 1 < sk else 0
                v = lo | (hi << 8)
                store[g][j][r] = v - 65536 if v >= 32768 else v
    return torch.tensor(store, dtype=torch.int16).reshape(g_count, cols, a)


def check_ascend(out, e, grouped):
    """out must have the exact Ascend strides and hold ref_ascend(e) including zero padding."""
    e3 = e if grouped else e[None]
    g_count, mn, sk = e3.shape
    cols, a = (sk + 1) // 2, align(mn, 16)
    assert out.dtype == torch.int16
    assert out.shape == ((g_count,) if grouped else ()) + (mn, cols)
    assert out.stride() == ((cols * a,) if grouped else ()) + (1, a)
    assert utils.is_ascend_sf_layout(out)
    storage = out.as_strided((g_count, cols, a), (cols * a, a, 1))
    assert torch.equal(storage, ref_ascend(e3))
    # round trip: low / high bytes give back the exponents (odd SK: the last high byte is 0)
    u = out.to(torch.int32) & 0xFFFF
    back = torch.stack([u & 0xFF, u >> 8], dim=-1).flatten(-2)
    assert torch.equal(back[..., :sk], e.to(torch.int32))
    if sk % 2:
        assert not bool(back[..., sk].any())


def check_upstream_words(out, e, grouped):
    """out must be upstream's packed layout: int32 words of to_words(e), MN-major with the column stride
    get_tma_aligned_size(MN, 4) (32 bytes) and zero padding."""
    e3 = e if grouped else e[None]
    g_count, mn, sk = e3.shape
    cols, a = (sk + 3) // 4, align(mn, 8)
    assert out.dtype == torch.int32 and a == utils.get_tma_aligned_size(mn, 4)
    assert out.shape == ((g_count,) if grouped else ()) + (mn, cols)
    assert out.stride() == ((cols * a,) if grouped else ()) + (1, a)
    storage = out.as_strided((g_count, cols, a), (cols * a, a, 1))
    want = torch.zeros(g_count, cols, a, dtype=torch.int32)
    want[:, :, :mn] = to_words(e3).transpose(1, 2)
    assert torch.equal(storage, want)


SHAPES = [(1, 1), (5, 3), (16, 2), (17, 7), (33, 4)]


@pytest.mark.parametrize("groups", [None, 1, 2, 3])
@pytest.mark.parametrize("mn,sk", SHAPES)
def test_packed_ue8m0x2_from_fp32(mn, sk, groups):
    shape = (mn, sk) if groups is None else (groups, mn, sk)
    e, sf = random_exponents(shape)
    out = utils.get_mn_major_packed_ue8m0x2_tensor(sf)
    check_ascend(out, e, groups is not None)
    check_upstream_words(utils.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf), e, groups is not None)
    assert torch.equal(utils.dequant_fp8(torch.ones(shape[:-1] + (sk * 32,)), out, 1, 32),
                       sf.repeat_interleave(32, dim=-1))


@pytest.mark.parametrize("groups", [None, 2])
@pytest.mark.parametrize("mn,sk", SHAPES)
def test_packed_ue8m0x2_from_bytes_and_words(mn, sk, groups):
    shape = (mn, sk) if groups is None else (groups, mn, sk)
    e, _ = random_exponents(shape)
    grouped = groups is not None
    check_ascend(utils.get_mn_major_packed_ue8m0x2_tensor(e.to(torch.uint8)), e, grouped)
    if E8M0 is not None:
        check_ascend(utils.get_mn_major_packed_ue8m0x2_tensor(e.to(torch.uint8).view(E8M0)), e, grouped)
    words = to_words(e)
    check_ascend(utils.get_mn_major_packed_ue8m0x2_tensor(words, sk=sk), e, grouped)
    if sk % 4 == 0:  # sk inferred as 4 * columns
        check_ascend(utils.get_mn_major_packed_ue8m0x2_tensor(words), e, grouped)


def test_zero_scale_and_non_contiguous_input():
    e, sf = random_exponents((20, 6))
    sf[3, 1], e[3, 1] = 0.0, 0  # +0 is accepted and encoded as byte 0, as upstream
    check_ascend(utils.get_mn_major_packed_ue8m0x2_tensor(sf), e, False)
    check_ascend(utils.get_mn_major_packed_ue8m0x2_tensor(sf.T.contiguous().T), e, False)


@pytest.mark.parametrize("bad", [0.3, 3.0, -2.0, float("inf"), float("nan"), 2.0 ** -130])
def test_packed_ue8m0x2_rejects_non_powers_of_two(bad):
    _, sf = random_exponents((4, 3))
    sf[2, 1] = bad
    with pytest.raises(ValueError, match=r"^sf: .*not a power of two.*sf\[2, 1\]"):
        utils.get_mn_major_packed_ue8m0x2_tensor(sf)


def test_packed_ue8m0x2_errors():
    with pytest.raises(TypeError, match="^sf: "):
        utils.get_mn_major_packed_ue8m0x2_tensor(torch.ones(4, 2, dtype=torch.float16))
    with pytest.raises(TypeError, match="^sf: "):
        utils.get_mn_major_packed_ue8m0x2_tensor([[1.0]])
    with pytest.raises(ValueError, match="^sf: "):
        utils.get_mn_major_packed_ue8m0x2_tensor(torch.ones(4))
    with pytest.raises(ValueError, match="^sf: .*255"):
        utils.get_mn_major_packed_ue8m0x2_tensor(torch.full((2, 2), 255, dtype=torch.uint8))
    with pytest.raises(ValueError, match="^sk: "):
        utils.get_mn_major_packed_ue8m0x2_tensor(torch.zeros(2, 2, dtype=torch.int32), sk=9)
    with pytest.raises(ValueError, match="^sk: "):
        utils.get_mn_major_packed_ue8m0x2_tensor(torch.ones(2, 3), sk=4)
    with pytest.raises(TypeError, match="^psum_layout: expected an int32"):
        utils.get_mn_major_tma_aligned_packed_ue8m0_tensor(torch.ones(2, 3), psum_layout=torch.zeros(1))


@pytest.mark.parametrize("groups", [None, 1, 3])
@pytest.mark.parametrize("mn,sk", [(1, 1), (5, 3), (8, 2), (13, 4)])
def test_mn_major_tma_aligned_tensor(mn, sk, groups):
    shape = (mn, sk) if groups is None else (groups, mn, sk)
    sf = torch.rand(shape) + 0.5
    out = utils.get_mn_major_tma_aligned_tensor(sf)
    a = align(mn, 8)
    assert out is not sf and out.dtype == torch.float32 and torch.equal(out, sf)
    assert out.stride() == ((sk * a,) if groups else ()) + (1, a)
    g_count = groups or 1
    storage = out.as_strided((g_count, sk, a), (sk * a, a, 1))
    for g in range(g_count):
        for c in range(sk):
            for r in range(a):
                want = sf.reshape(g_count, mn, sk)[g, r, c].item() if r < mn else 0.0
                assert storage[g, c, r].item() == want
    assert utils.get_mn_major_tma_aligned_tensor(out) is out


def test_mn_major_tma_aligned_tensor_errors_and_misaligned_views():
    with pytest.raises(TypeError, match="^sf: "):
        utils.get_mn_major_tma_aligned_tensor(torch.ones(4, 2, dtype=torch.float16))
    with pytest.raises(ValueError, match="^sf: "):
        utils.get_mn_major_tma_aligned_tensor(torch.ones(2, 2, 2, 2))
    base = torch.zeros(64, dtype=torch.float32)
    view = base[1:].as_strided((8, 2), (1, 8))  # right strides, data pointer not 32-byte aligned
    out = utils.get_mn_major_tma_aligned_tensor(view)
    assert out is not view and torch.equal(out, view) and out.data_ptr() % 32 == 0


def test_get_tma_aligned_size():
    assert [utils.get_tma_aligned_size(x, 4) for x in (0, 1, 5, 8, 9)] == [0, 8, 8, 8, 16]
    assert utils.get_tma_aligned_size(5, 2) == 16 and utils.get_tma_aligned_size(33, 1) == 64
    with pytest.raises(ValueError, match="^element_size: "):
        utils.get_tma_aligned_size(5, 3)
    with pytest.raises(TypeError, match="^x: "):
        utils.get_tma_aligned_size(5.0, 4)


def test_is_ascend_sf_layout():
    out = utils.get_mn_major_packed_ue8m0x2_tensor(torch.ones(5, 3))
    assert utils.is_ascend_sf_layout(out)
    assert not utils.is_ascend_sf_layout(torch.zeros(5, 2, dtype=torch.int16))
    assert not utils.is_ascend_sf_layout(torch.zeros(16, 2, dtype=torch.int16).T.contiguous().T[:5].float())
    assert not utils.is_ascend_sf_layout(torch.zeros(16, 2, dtype=torch.int32).T.contiguous().T)
    assert not utils.is_ascend_sf_layout(torch.zeros(40, dtype=torch.int16)[1:].as_strided((5, 2), (1, 16)))
    assert not utils.is_ascend_sf_layout(torch.zeros(24, dtype=torch.int16).as_strided((5, 2), (1, 16)))
    assert not utils.is_ascend_sf_layout("sf")


# ------------------------------------------------------------------------------------------------
# transform_sf_into_required_layout

def transform(sf, mn, k, recipe, **kw):
    return utils.transform_sf_into_required_layout(sf, mn, k, recipe, **kw)


@pytest.mark.parametrize("groups", [None, 1, 2, 3])
def test_transform_ue8m0_inputs(groups):
    mn, k = 21, 200  # SK = 7 (odd), 2 words of 4
    lead = () if groups is None else (groups,)
    e, sf = random_exponents(lead + (mn, 7))
    kw = {"num_groups": groups}
    out = transform(sf, mn, k, (1, 32), **kw)
    check_ascend(out, e, groups is not None)
    assert transform(out, mn, k, (1, 32), **kw) is out  # no-copy pass-through
    check_ascend(transform(to_words(e), mn, k, (1, 1, 32), is_sfa=True, **kw), e, groups is not None)
    check_ascend(transform(e.to(torch.uint8), mn, k, (1, 32), **kw), e, groups is not None)
    if E8M0 is not None:
        check_ascend(transform(e.to(torch.uint8).view(E8M0), mn, k, (1, 32), **kw), e, groups is not None)
    e128, _ = random_exponents(lead + (mn, 2))  # gran_k 128 UE8M0 keeps its own granularity
    check_ascend(transform(to_words(e128), mn, k, (1, 128), **kw), e128, groups is not None)


@pytest.mark.parametrize("recipe,is_sfa", [((128, 1, 32), True), ((1, 128, 32), False), ((128, 32), None)])
def test_transform_fp32_mx_broadcasts_rows(recipe, is_sfa):
    mn, k = 300, 96
    e, sf = random_exponents((3, 3))  # ceil(300 / 128) rows
    out = transform(sf, mn, k, recipe, is_sfa=is_sfa)
    check_ascend(out, e.repeat_interleave(128, dim=0)[:mn], False)


def test_transform_fp32_mx_rejects_non_power_of_two():
    sf = torch.full((4, 2), 0.75)
    with pytest.raises(ValueError, match="^sf: .*not a power of two"):
        transform(sf, 4, 64, (1, 32))
    out = transform(sf, 4, 64, (1, 32), disable_ue8m0_cast=True)  # FP32 stays FP32
    assert out.dtype == torch.float32 and out.stride() == (1, 8) and torch.equal(out, sf)


@pytest.mark.parametrize("groups", [None, 2])
def test_transform_fp32_per_token_128(groups):
    lead = () if groups is None else (groups,)
    sf = torch.rand(lead + (13, 3)) + 0.1
    out = transform(sf, 13, 300, (1, 128, 128), is_sfa=True, num_groups=groups)
    assert out.dtype == torch.float32 and torch.equal(out, sf)
    assert out.stride() == ((3 * 16,) if groups else ()) + (1, 16)
    assert transform(out, 13, 300, (1, 128), num_groups=groups) is out


@pytest.mark.parametrize("groups", [None, 3])
def test_transform_fp32_block_128(groups):
    lead = () if groups is None else (groups,)
    sf = torch.rand(lead + (2, 3)) + 0.1  # N = 200, K = 300
    assert transform(sf, 200, 300, (1, 128, 128), is_sfa=False, num_groups=groups) is sf
    assert transform(sf, 200, 96, (128, 32), num_groups=groups, disable_ue8m0_cast=True) is sf
    if groups:
        spaced = torch.rand(groups, 10)[:, :6].reshape(groups, 2, 3)  # groups apart, each contiguous
        assert transform(spaced, 200, 300, (128, 128), num_groups=groups) is spaced
    with pytest.raises(ValueError, match="^sf: .*contiguous"):
        transform(sf.transpose(-1, -2).contiguous().transpose(-1, -2), 200, 300, (128, 128), num_groups=groups)


def test_transform_int16_in_other_layout():
    out = transform(torch.ones(16, 4), 16, 128, (1, 32))
    with pytest.raises(ValueError, match=r"^sf: .*strides \(1, 16\)"):
        transform(out.contiguous(), 16, 128, (1, 32))
    with pytest.raises(ValueError, match="^sf: "):  # right strides, unaligned data pointer
        transform(torch.zeros(80, dtype=torch.int16)[1:].as_strided((16, 2), (1, 16)), 16, 128, (1, 32))


ERRORS = [
    (TypeError, "^sf: ", lambda: transform(torch.ones(4, 2, dtype=torch.float16), 4, 64, (1, 32))),
    (TypeError, "^sf: ", lambda: transform(torch.ones(4, 2, dtype=torch.float64), 4, 64, (1, 32))),
    (TypeError, "^sf: ", lambda: transform([[1.0]], 1, 32, (1, 32))),
    (ValueError, "^sf: ", lambda: transform(torch.ones(4, 3), 4, 64, (1, 32))),
    (ValueError, "^sf: ", lambda: transform(torch.ones(4, 2), 5, 64, (1, 32))),
    (ValueError, "^sf: ", lambda: transform(torch.ones(4, 1, dtype=torch.int32), 4, 256, (1, 32))),
    (ValueError, "^sf: ", lambda: transform(torch.ones(4, 2, dtype=torch.uint8), 4, 96, (1, 32))),
    (ValueError, "^is_sfa: ", lambda: transform(torch.ones(4, 2), 4, 64, (1, 1, 32))),
    (ValueError, "^is_sfa: ", lambda: transform(torch.ones(4, 2), 4, 64, (1, 32), is_sfa=True)),
    (ValueError, "^recipe: ", lambda: transform(torch.ones(4, 2), 4, 128, (1, 64))),
    (ValueError, "^recipe: ", lambda: transform(torch.ones(4, 2), 4, 64, (32,))),
    (ValueError, "^recipe: ", lambda: transform(torch.ones(1, 1), 4, 128, (64, 128))),
    (ValueError, "^recipe: ", lambda: transform(torch.ones(1, 2, dtype=torch.int32), 128, 256, (128, 32))),
    (TypeError, "^recipe: ", lambda: transform(torch.ones(4, 2), 4, 64, 32)),
    (ValueError, "^num_groups: ", lambda: transform(torch.ones(2, 4, 2), 4, 64, (1, 32), num_groups=3)),
    (ValueError, "^num_groups: ", lambda: transform(torch.ones(4, 2), 4, 64, (1, 32), num_groups=1)),
    (ValueError, "^sf: ", lambda: transform(torch.ones(1, 4, 2), 4, 64, (1, 32))),
    (TypeError, "^mn: ", lambda: transform(torch.ones(4, 2), 4.0, 64, (1, 32))),
    (ValueError, "^k: ", lambda: transform(torch.ones(4, 2), 4, -1, (1, 32))),
    (TypeError, "^disable_ue8m0_cast: ", lambda: transform(torch.ones(4, 2), 4, 64, (1, 32), disable_ue8m0_cast=1)),
    (TypeError, "^psum_layout: expected an int32",
     lambda: transform(torch.ones(4, 2), 4, 64, (1, 32), psum_layout=torch.zeros(1))),
]


@pytest.mark.parametrize("exc,match,call", ERRORS)
def test_transform_errors(exc, match, call):
    with pytest.raises(exc, match=match):
        call()



def test_psum_layout_packing_skips_gap_rows():
    # Groups [0, 100) and [128, 160) with alignment 128: rows 100..127 and 160.. are gaps.
    torch.manual_seed(3)
    sf = torch.pow(2.0, torch.randint(-4, 4, (192, 4)).float())
    sf[100:128] = 3.0                       # not powers of two, but never inspected
    sf[160:] = float("nan")
    ends = torch.tensor([100, 160], dtype=torch.int32)
    out = utils.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=ends)
    clean = torch.where(torch.isfinite(sf) & (sf != 3.0), sf, torch.ones_like(sf))
    ref = utils.get_mn_major_packed_ue8m0x2_tensor(clean)
    valid = torch.zeros(192, dtype=torch.bool)
    valid[:100] = True
    valid[128:160] = True
    words = utils.get_mn_major_tma_aligned_packed_ue8m0_tensor(clean)
    assert out.dtype == torch.int32 and out.stride() == words.stride()
    assert torch.equal(out[valid], words[valid]) and (out[~valid] == 0).all()
    via_transform = utils.transform_sf_into_required_layout(sf, 192, 128, (1, 32), psum_layout=ends)
    assert torch.equal(via_transform[valid], ref[valid]) and (via_transform[~valid] == 0).all()


@pytest.mark.parametrize("gran_k", [32, 128])
def test_k_grouped_mx_pairs_index_scales_by_global_k(gran_k):
    """The NPU's K-grouped FP8 scales: every 32 K values of the concatenated groups get their group's
    scale (written out by a plain loop here), two per int16 pair, low byte first."""
    from deepgemm_ascend.utils.layout import k_grouped_mx_pairs

    ks, mn = [128, 0, 256, 64 * 3], 24
    rows = sum((k + gran_k - 1) // gran_k for k in ks)
    exps = torch.randint(100, 150, (rows, mn))
    sf = torch.pow(2.0, (exps - 127).double()).float()
    got = k_grouped_mx_pairs(sf, ks, gran_k)
    blocks, r = [], 0
    for k in ks:
        blocks += [exps[r + j * 32 // gran_k] for j in range(k // 32)]
        r += (k + gran_k - 1) // gran_k
    want = [blocks[2 * p] | (blocks[2 * p + 1] << 8) for p in range(len(blocks) // 2)]
    want = torch.stack(want)
    assert got.dtype == torch.int16 and got.shape == (sum(ks) // 64, mn) and got.is_contiguous()
    assert torch.equal(got.to(torch.int64) & 0xFFFF, want)
    with pytest.raises(ValueError, match=f"expected {rows} rows"):
        k_grouped_mx_pairs(sf[:-1], ks, gran_k)
    with pytest.raises(ValueError, match="not a power of two"):  # host scales: checked in C++
        k_grouped_mx_pairs(sf * 3, ks, gran_k)


def k_grouped_reference(sf, sizes, gran_k):
    """Upstream's per-group packing written out: group g's scale rows (ceil(k_g / gran_k) of them, after the
    previous groups') four per int32 word, row-major [sum ceil(k_g / (4 gran_k)), MN]."""
    e = ((sf.view(torch.int32).to(torch.int64) >> 23) & 0xFF)
    out, row = [], 0
    for k in sizes:
        rows = (k + gran_k - 1) // gran_k
        for j in range((k + 4 * gran_k - 1) // (4 * gran_k)):
            word = torch.zeros(sf.shape[1], dtype=torch.int64)
            for t in range(4):
                if 4 * j + t < rows:
                    word |= e[row + 4 * j + t] << (8 * t)
            out.append(torch.where(word >= 2 ** 31, word - 2 ** 32, word))
        row += rows
    return torch.stack(out).to(torch.int32) if out else torch.zeros(0, sf.shape[1], dtype=torch.int32)


@pytest.mark.parametrize("gran_k", [32, 128])
def test_k_grouped_packed_ue8m0_matches_the_per_group_packing(gran_k):
    torch.manual_seed(5)
    ks, mn = [4 * gran_k, 0, 3 * gran_k, 9 * gran_k], 12
    _, sf = random_exponents((sum((k + gran_k - 1) // gran_k for k in ks), mn))
    layout = torch.tensor(ks, dtype=torch.int32)
    got = utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, layout, ks, gran_k, gran_k)
    assert got.dtype == torch.int32 and got.is_contiguous()
    assert torch.equal(got, k_grouped_reference(sf, ks, gran_k))
    with pytest.raises(ValueError, match="^sf: expected"):
        utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf[1:], layout, ks, gran_k, gran_k)
    with pytest.raises(ValueError, match="^sf: MN"):
        utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf[:, :6], layout, ks, gran_k, gran_k)
    with pytest.raises(ValueError, match="^ks_cpu: the K sizes are needed"):
        utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, layout, None, gran_k, gran_k)
    bad = sf.clone()
    bad[2, 3] = 3.0
    with pytest.raises(ValueError, match=r"^sf: 1 of .*not a power of two"):
        utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(bad, layout, ks, gran_k, gran_k)


@pytest.mark.parametrize("k_alignment", [32, 160])
def test_k_grouped_packed_ue8m0_psum_layout(k_alignment):
    """psum layout: group g's K is end[g] - align(end[g-1], k_alignment); the words of the real sizes come
    first whether the sizes are given (aligned: an upper bound) or not (rows + 3 G) / 4."""
    torch.manual_seed(6)
    gran_k, mn = 32, 8
    real = [100, 0, 64, 33]
    ends, pos = [], 0
    for k in real:
        pos = (pos + k_alignment - 1) // k_alignment * k_alignment + k if k else pos
        ends.append(pos)
    _, sf = random_exponents((sum((k + gran_k - 1) // gran_k for k in real), mn))
    layout = torch.tensor(ends, dtype=torch.int32)
    want = k_grouped_reference(sf, real, gran_k)
    fn = utils.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    exact = fn(sf, layout, real, gran_k, k_alignment, use_psum_layout=True)
    assert torch.equal(exact, want)
    for ks in ([align(k, k_alignment) for k in real], None, []):
        got = fn(sf, layout, ks, gran_k, k_alignment, use_psum_layout=True)
        assert got.shape[0] >= want.shape[0] and torch.equal(got[:want.shape[0]], want)
        assert (got[want.shape[0]:] == 0).all()
