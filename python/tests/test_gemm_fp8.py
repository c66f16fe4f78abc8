"""FP8 / FP4 dense GEMMs against float64 references (dequantised inputs, and the original bf16 data)."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.testing import calc_diff, poison_

FUNCS = {"nt": dg.fp8_fp4_gemm_nt, "nn": dg.fp8_fp4_gemm_nn, "tn": dg.fp8_fp4_gemm_tn, "tt": dg.fp8_fp4_gemm_tt}


def expand(sf, gran_mn, gran_k, rows, cols):
    """Scale of every element of a [rows, cols] operand (independent of the library's helpers)."""
    return sf.repeat_interleave(gran_mn, 0)[:rows].repeat_interleave(gran_k, 1)[:, :cols]


def fp4_values(packed):
    """Packed e2m1 [r, c/2] -> float [r, c] by the E2M1 table (low nibble first)."""
    table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=torch.float64)
    u = packed.view(torch.uint8).long()
    return torch.stack([table[u & 0xF], table[u >> 4]], dim=-1).flatten(-2)


class Quantised:
    """One operand [rows, K]: quantised values, scales (fp32, logical orientation), recipe and dequantised values."""

    def __init__(self, x, kind, gran_mn, gran_k, ue8m0):
        self.kind, self.gran = kind, (gran_mn, gran_k)
        if kind == "fp4":
            self.q, self.sf = dg.per_token_cast_to_fp4(x, ue8m0, gran_k=gran_k)
            values = fp4_values(self.q)
        elif gran_mn == 1:
            self.q, self.sf = dg.per_token_cast_to_fp8(x, ue8m0, gran_k=gran_k)
            values = self.q.double()
        else:
            self.q, self.sf = dg.per_block_cast_to_fp8(x, ue8m0, gran_k=gran_k)
            values = self.q.double()
        self.deq = values * expand(self.sf.double(), gran_mn, gran_k, *x.shape)

    def stored(self, mn_major):
        """(tensor, scales) as upstream passes them: MN-major pairs are transposed (values and scales)."""
        if not mn_major:
            return self.q, self.sf
        q = dg.transpose_packed_fp4(self.q) if self.kind == "fp4" else self.q.T.contiguous()
        return q, self.sf.T

    def nt_view(self, mn_major):
        """(tensor, scales) as upstream passes an MN-major operand to an nt call: the transposed view of the
        MN-major storage (FP4 packed along MN), the scales as for K-major."""
        q, _ = self.stored(mn_major)
        return (q.T if mn_major else q), self.sf


def run(m, n, k, layout, kinds=("fp8", "fp8"), grans=((1, 128), (128, 128)), ue8m0=False, out=torch.bfloat16,
        with_c=False, disable_ue8m0_cast=False, majors=None):
    torch.manual_seed(m + 3 * n + 7 * k)
    a, b = torch.randn(m, k), torch.randn(n, k)
    qa, qb = Quantised(a, kinds[0], *grans[0], ue8m0), Quantised(b, kinds[1], *grans[1], ue8m0)
    d = poison_(torch.empty(m, n, dtype=out))
    c = (torch.randn(m, n) * 32).to(out) if with_c else None
    if majors is None:
        FUNCS[layout](qa.stored(layout[0] == "t"), qb.stored(layout[1] == "n"), d, c,
                      recipe_a=grans[0], recipe_b=grans[1], disable_ue8m0_cast=disable_ue8m0_cast)
    else:  # the nt call with (K-major or MN-major) operands, as upstream's tests make them
        dg.fp8_fp4_gemm_nt(qa.nt_view(majors[0] == "mn"), qb.nt_view(majors[1] == "mn"), d, c,
                           recipe_a=grans[0], recipe_b=grans[1], disable_ue8m0_cast=disable_ue8m0_cast)
    ref_deq = qa.deq @ qb.deq.T + (c.double() if with_c else 0)
    ref_orig = a.double() @ b.double().T + (c.double() if with_c else 0)
    got = d.double()
    assert not torch.isnan(got).any(), "unwritten (poisoned) entries in D"
    # Against the dequantised inputs only fp32 accumulation and the output rounding differ.
    assert calc_diff(got, ref_deq) < 1e-5
    rtol = 2.0 ** -8 if out == torch.bfloat16 else 1e-5
    err = (got - ref_deq).abs()
    assert (err <= rtol * ref_deq.abs() + 1e-5 * k + 1e-4).all(), f"max elementwise error {float(err.max()):.3g}"
    return calc_diff(got, ref_orig)


LAYOUTS = ["nt", "nn", "tn", "tt"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(1, 300, 256), (129, 257, 384), (64, 96, 200), (256, 512, 1024)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_block_recipe(shape, layout):
    assert run(*shape, layout, grans=((1, 128), (128, 128))) < 1e-3


@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
@pytest.mark.parametrize("with_c", [False, True], ids=["noC", "C"])
def test_fp8_per_token_recipe(out, with_c):
    assert run(100, 136, 640, "nt", grans=((1, 128), (1, 128)), out=out, with_c=with_c) < 1e-3


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("k", [64, 96, 1000])
def test_fp8_mx_recipe_ue8m0(layout, k):
    assert run(70, 90, k, layout, grans=((1, 32), (1, 32)), ue8m0=True) < 1e-3


@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("k", [128, 320, 2048])
def test_fp8_x_fp4(layout, k):
    assert run(64, 160, k, layout, kinds=("fp8", "fp4"), grans=((1, 128), (1, 32)), ue8m0=True) < 1e-2


# Both operands with MX scales (one UE8M0 per 32 K values), either operand FP4, D bf16 with C or fp32: the
# form the NPU kernels take (the FP4 operand widened to e4m3 for the fp8 MX cube).
@pytest.mark.parametrize("kinds,out,with_c", [(("fp8", "fp4"), torch.bfloat16, True),
                                              (("fp4", "fp8"), torch.float32, False)], ids=["fp8xfp4-C", "fp4xfp8"])
@pytest.mark.parametrize("shape", [(1, 96, 64), (77, 130, 320)], ids=lambda s: "x".join(map(str, s)))
def test_mixed_mx_pairs(kinds, out, with_c, shape):
    assert run(*shape, "nt", kinds=kinds, grans=((1, 32), (1, 32)), ue8m0=True, out=out, with_c=with_c) < 2e-2


@pytest.mark.parametrize("k", [64, 320, 1024])
def test_fp4_x_fp4(k):
    assert run(50, 80, k, "nt", kinds=("fp4", "fp4"), grans=((1, 32), (1, 32)), ue8m0=True) < 2e-2


@pytest.mark.parametrize("kinds", [("fp4", "fp4"), ("fp8", "fp4"), ("fp4", "fp8"), ("fp8", "fp8")], ids="x".join)
@pytest.mark.parametrize("majors", [("k", "mn"), ("mn", "k"), ("mn", "mn")], ids="-".join)
def test_mn_major_operands_through_nt(kinds, majors):
    """Upstream's MN-major operands (FP4 packed along MN, passed as the .T view) through the nt entry point."""
    assert run(70, 96, 320, "nt", kinds=kinds, grans=((1, 32), (1, 32)), ue8m0=True, majors=majors) < 2e-2


def test_mx_recipe_with_fp32_scales_kept_by_disable_ue8m0_cast():
    # Non-power-of-two scales under a gran_k 32 recipe: refused by default, promoted in fp32 on request.
    with pytest.raises(ValueError, match="power of two"):
        run(32, 48, 128, "nt", grans=((1, 32), (1, 32)), ue8m0=False)
    assert run(32, 48, 128, "nt", grans=((1, 32), (1, 32)), ue8m0=False, disable_ue8m0_cast=True) < 1e-3


def test_production_shapes_decode():
    for n, k in [(7168, 2048), (2112, 7168)]:
        assert run(128, n, k, "nt") < 1e-3


def test_upstream_aliases_and_default_recipe():
    assert dg.fp8_gemm_nt is dg.fp8_fp4_gemm_nt
    torch.manual_seed(0)
    a, b = torch.randn(40, 256), torch.randn(72, 256)
    qa, sa = dg.per_token_cast_to_fp8(a, False)
    qb, sb = dg.per_block_cast_to_fp8(b, False)
    d = poison_(torch.empty(40, 72))
    dg.fp8_gemm_nt((qa, sa), (qb, sb), d)   # fp32 SFB -> (1, 128, 128)
    ref = (qa.double() * expand(sa.double(), 1, 128, 40, 256)) @ (qb.double() * expand(sb.double(), 128, 128, 72, 256)).T
    assert calc_diff(d, ref) < 1e-6


def test_bf16_d_rounds_overflow_to_inf_like_the_fp32_result():
    # Results past bfloat16's range (but finite in float32) round to inf, as torch rounds the fp32 result;
    # a saturating cast would give bfloat16's max instead.
    m, n, k = 32, 16, 256
    a = torch.ones(m, k).to(torch.float8_e4m3fn)
    b = torch.ones(n, k).to(torch.float8_e4m3fn)
    sfa = torch.ones(m, k // 128)
    sfa[::2] = 0.5 ** torch.arange(m // 2).float()[:, None]  # some rows inside bfloat16's range
    sfb = torch.full((1, k // 128), 3.4e38 / k)
    d32, d16 = torch.empty(m, n), poison_(torch.empty(m, n, dtype=torch.bfloat16))
    dg.fp8_gemm_nt((a, sfa), (b, sfb), d32)
    dg.fp8_gemm_nt((a, sfa), (b, sfb), d16)
    assert d32.isfinite().all() and torch.isinf(d32.bfloat16()).any()
    assert torch.equal(d16.view(torch.int16), d32.bfloat16().view(torch.int16))


def test_trivial_sizes():
    sa, sb = torch.ones(0, 1), torch.ones(1, 1)
    d = torch.full((0, 8), 3.0)
    dg.fp8_gemm_nt((torch.zeros(0, 128, dtype=torch.float8_e4m3fn), sa), (torch.zeros(8, 128).to(torch.float8_e4m3fn), sb), d)
    c = torch.randn(4, 8)
    d = poison_(torch.empty(4, 8))
    dg.fp8_gemm_nt((torch.zeros(4, 0, dtype=torch.float8_e4m3fn), torch.ones(4, 0)),
                   (torch.zeros(8, 0, dtype=torch.float8_e4m3fn), torch.ones(1, 0)), d, c)
    assert torch.equal(d, c)


class TestErrors:
    def operands(self):
        torch.manual_seed(1)
        qa, sa = dg.per_token_cast_to_fp8(torch.randn(32, 256), False)
        qb, sb = dg.per_block_cast_to_fp8(torch.randn(64, 256), False)
        return (qa, sa), (qb, sb), torch.full((32, 64), 7.0)

    def expect(self, exc, pattern, fn, d):
        before = d.clone()
        with pytest.raises(exc, match=pattern):
            fn()
        assert torch.equal(d, before), "output written despite the error"

    def test_wrong_scale_shape(self):
        a, (qb, sb), d = self.operands()
        self.expect(ValueError, r"^sf", lambda: dg.fp8_gemm_nt(a, (qb, sb[:, :1]), d), d)

    def test_wrong_scale_dtype(self):
        (qa, sa), b, d = self.operands()
        self.expect(TypeError, r"^sf", lambda: dg.fp8_gemm_nt((qa, sa.half()), b, d), d)

    def test_unknown_recipe(self):
        a, b, d = self.operands()
        self.expect(ValueError, r"gran|recipe", lambda: dg.fp8_gemm_nt(a, b, d, recipe=(1, 128, 64)), d)
        self.expect(ValueError, r"^recipe", lambda: dg.fp8_gemm_nt(a, b, d, recipe=(1, 128)), d)

    def test_wrong_operand_dtype(self):
        (qa, sa), b, d = self.operands()
        self.expect(TypeError, r"^a:", lambda: dg.fp8_gemm_nt((qa.float(), sa), b, d), d)

    def test_not_a_pair(self):
        (qa, sa), b, d = self.operands()
        self.expect(TypeError, r"^a:", lambda: dg.fp8_gemm_nt(qa, b, d), d)

    def test_mismatched_k(self):
        (qa, sa), (qb, sb), d = self.operands()
        self.expect(ValueError, r"^b:", lambda: dg.fp8_gemm_nt((qa, sa), (qb[:, :128], sb[:, :1]), d), d)

    def test_non_power_of_two_under_mx_recipe(self):
        (qa, sa), (qb, sb), d = self.operands()
        self.expect(ValueError, "power of two", lambda: dg.fp8_gemm_nt((qa, sa.repeat_interleave(4, 1)),
                                                                       (qb, sb.repeat_interleave(128, 0).repeat_interleave(4, 1)),
                                                                       d, recipe=(1, 1, 32)), d)


@pytest.mark.parametrize("dtype", ["uint8", "float4_e2m1fn_x2"])
def test_fp4_storage_dtypes(dtype):
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    torch.manual_seed(5)
    a, b = torch.randn(24, 128), torch.randn(40, 128)
    qa, sa = dg.per_token_cast_to_fp8(a, True, gran_k=32)
    qb, sb = dg.per_token_cast_to_fp4(b, True, gran_k=32)
    ref = torch.empty(24, 40)
    dg.fp8_gemm_nt((qa, sa), (qb, sb), ref, recipe_a=(1, 32), recipe_b=(1, 32))
    d = poison_(torch.empty(24, 40))
    dg.fp8_gemm_nt((qa, sa), (qb.view(getattr(torch, dtype)), sb), d, recipe_a=(1, 32), recipe_b=(1, 32))
    assert torch.equal(d, ref)


def test_prepacked_ascend_scales_pass_through():
    torch.manual_seed(6)
    a, b = torch.randn(48, 256), torch.randn(32, 256)
    qa, sa = dg.per_token_cast_to_fp8(a, True, gran_k=32)
    qb, sb = dg.per_token_cast_to_fp8(b, True, gran_k=32)
    pa, pb = dg.get_mn_major_packed_ue8m0x2_tensor(sa), dg.get_mn_major_packed_ue8m0x2_tensor(sb)
    assert pa.dtype == torch.int16 and pa.stride(-2) == 1
    d1, d2 = poison_(torch.empty(48, 32)), poison_(torch.empty(48, 32))
    dg.fp8_gemm_nt((qa, sa), (qb, sb), d1, recipe=(1, 1, 32))
    dg.fp8_gemm_nt((qa, pa), (qb, pb), d2, recipe=(1, 1, 32))
    assert torch.equal(d1, d2)


@pytest.mark.parametrize("k", [256, 4096 + 64])
def test_block_ue8m0_scales_regrouped_to_the_mx_block_are_the_same_scaling(k):
    """What the NPU path does to 128-K UE8M0 scales (the 950 MX cube takes one scale per 32 K values):
    each scale repeated four times, bit-exact, and the GEMM with them matches the original recipe."""
    from deepgemm_ascend.utils.layout import _ue8m0_regrouped, get_mn_major_packed_ue8m0x2_tensor

    m, n = 70, 96
    torch.manual_seed(k)
    a, b = torch.randn(m, k), torch.randn(n, k) * 3
    qa, qb = Quantised(a, "fp8", 1, 128, True), Quantised(b, "fp8", 1, 128, True)
    sfa = get_mn_major_packed_ue8m0x2_tensor(qa.sf)
    sfa32 = _ue8m0_regrouped(sfa, k, 128, 32)
    want = get_mn_major_packed_ue8m0x2_tensor(qa.sf.repeat_interleave(4, 1)[:, :(k + 31) // 32])
    assert sfa32.shape == want.shape and sfa32.stride() == want.stride() and torch.equal(sfa32, want)
    sfb32 = _ue8m0_regrouped(get_mn_major_packed_ue8m0x2_tensor(qb.sf), k, 128, 32)
    d128, d32 = (poison_(torch.empty(m, n, dtype=torch.float32)) for _ in range(2))
    dg.fp8_fp4_gemm_nt((qa.q, qa.sf), (qb.q, qb.sf), d128, recipe=(1, 1, 128))
    dg.fp8_fp4_gemm_nt((qa.q, sfa32), (qb.q, sfb32), d32, recipe=(1, 1, 32))
    ref = qa.deq @ qb.deq.T
    for d in (d128, d32):
        assert calc_diff(d, ref) < 1e-6
        assert torch.allclose(d.double(), ref, rtol=1e-4, atol=1e-3 * ref.abs().max().item())


# ---- fp8_gemm_nt_skip_head_mid (upstream's head-split epilogue) ----------------------------------------

def _skip_head_mid_reference(qa, qb, heads, splits, fill):
    left, mid, right = splits
    ref = (qa.deq @ qb.deq.T).view(qa.deq.shape[0], heads, left + right)
    gap = torch.full((ref.shape[0], heads, mid), fill, dtype=torch.float64)
    return torch.cat([ref[:, :, :left], gap, ref[:, :, left:]], 2).view(ref.shape[0], -1)


@pytest.mark.parametrize("m,k,splits,heads,gran_n,out", [
    (70, 256, (32, 16, 32), 3, 1, torch.bfloat16),
    (33, 384, (128, 64, 128), 2, 128, torch.float32),
    (1, 128, (16, 0, 48), 2, 1, torch.bfloat16),
    (0, 128, (8, 8, 8), 2, 1, torch.bfloat16),
], ids=["per-token-B", "block-B-fp32", "no-gap-M1", "M0"])
def test_skip_head_mid(m, k, splits, heads, gran_n, out):
    torch.manual_seed(m + k)
    left, mid, right = splits
    n = heads * (left + right)
    qa = Quantised(torch.randn(m, k), "fp8", 1, 128, False)
    qb = Quantised(torch.randn(n, k), "fp8", gran_n, 128, False)
    d = torch.full((m, n + heads * mid), 7.0, dtype=out)
    dg.fp8_gemm_nt_skip_head_mid((qa.q, qa.sf), (qb.q, qb.sf), d, splits, recipe=(1, gran_n, 128))
    if m == 0:
        return
    ref = _skip_head_mid_reference(qa, qb, heads, splits, 7.0)
    got = d.double()
    gap = got.view(m, heads, -1)[:, :, left:left + mid]
    assert bool((gap == 7.0).all()), "the mid columns must stay untouched"
    assert calc_diff(got, ref) < 1e-5
    tol = 2.0 ** -8 if out == torch.bfloat16 else 1e-5
    assert ((got - ref).abs() <= tol * ref.abs() + 1e-4 * k).all()


def test_skip_head_mid_validation():
    qa = Quantised(torch.randn(8, 128), "fp8", 1, 128, False)
    qb = Quantised(torch.randn(128, 128), "fp8", 1, 128, False)
    qb_block = Quantised(torch.randn(128, 128), "fp8", 128, 128, False)
    d = poison_(torch.empty(8, 192, dtype=torch.bfloat16))
    before = d.clone()
    a, b, b_block, r = (qa.q, qa.sf), (qb.q, qb.sf), (qb_block.q, qb_block.sf), (1, 1, 128)
    cases = [
        (ValueError, "^head_splits", lambda: dg.fp8_gemm_nt_skip_head_mid(a, b, d, (48, 64, 48), recipe=r)),
        (ValueError, "^head_splits", lambda: dg.fp8_gemm_nt_skip_head_mid(a, b_block, d, (32, 32, 32))),  # gran_n
        (ValueError, "^head_splits", lambda: dg.fp8_gemm_nt_skip_head_mid(a, b, d, (64, -1, 64), recipe=r)),
        (ValueError, "^d", lambda: dg.fp8_gemm_nt_skip_head_mid(a, b, d, (64, 16, 64), recipe=r)),  # [8, 160]
        (TypeError, "^a", lambda: dg.fp8_gemm_nt_skip_head_mid((qa.q.to(torch.float8_e5m2), qa.sf), b, d,
                                                               (64, 32, 64), recipe=r)),
        (ValueError, "^recipe", lambda: dg.fp8_gemm_nt_skip_head_mid(a, b, d, (64, 32, 64), recipe=(1, 1, 32))),
    ]
    for exc, match, call in cases:
        with pytest.raises(exc, match=match):
            call()
    assert torch.equal(d.view(torch.int16), before.view(torch.int16)), "nothing is written on error"
