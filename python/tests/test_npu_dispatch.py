"""The NPU dispatch of every public kernel: on the npu-model backend a call either runs NPU
launchers on the instruction model (the launchers it reached are read back from the model's launch log) or
raises NotImplementedError because the entry point has no NPU kernel yet. The kernels without one are
exactly MISSING, which is what the README lists as missing on `npu` tensors; every public kernel is
covered. No device is needed: an `npu` tensor takes the same dispatch (api::on_npu_target)."""
import pathlib

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import _C, runtime
from deepgemm_ascend.testing import mega_moe as tm

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
pytestmark = pytest.mark.skipif("npu-model" not in dg.info()["backends"], reason="no NPU model library")

# Entry points without an NPU kernel yet (README: "Missing today, all on `npu` tensors").
MISSING = set()
# No NPU kernel of ours: torch ops that run on the tensors' device (no host sync), no launch.
TORCH_OPS = {"get_paged_mqa_logits_metadata"}
# Public callables that are not kernels on the NPU target: layout and quantisation helpers (host or torch
# code on any device), sizing and configuration.
NOT_KERNELS = {
    "align", "ceil_div", "ceil_to_ue8m0", "cast_back_from_fp4", "dequant_fp4", "dequant_fp8", "get_cmake_dir",
    "get_k_alignment_for_contiguous_layout", "get_m_alignment_for_contiguous_layout",
    "get_mk_alignment_for_contiguous_layout", "get_mn_major_packed_ue8m0x2_tensor",
    "get_mn_major_tma_aligned_packed_ue8m0_tensor", "get_mn_major_tma_aligned_tensor", "get_num_ai_cores",
    "get_num_sms", "get_symm_buffer_for_mega_moe", "get_theoretical_mk_alignment_for_contiguous_layout",
    "get_tma_aligned_size", "info", "is_ascend_sf_layout", "is_checked_mode", "pack_ue8m0_to_int",
    "per_block_cast_to_fp8", "per_channel_cast_to_fp8", "per_custom_dims_cast_to_fp8", "per_token_cast_to_fp4",
    "per_token_cast_to_fp8", "set_checked_mode", "set_host_isa", "set_mk_alignment_for_contiguous_layout",
    "set_num_ai_cores", "set_num_sms", "transform_sf_into_required_layout", "transform_weights_for_mega_moe",
    "transpose_packed_fp4", "unpack_ue8m0_from_int", "SymmBuffer",
    # Upstream's knobs, distributed helpers and vendor-BLAS baseline (torch's matmul, not a kernel of ours),
    # and a layout helper listed as missing (_missing.py).
    "set_tc_util", "get_tc_util", "set_pdl", "get_pdl", "set_ignore_compile_dims", "set_block_size_multiple_of",
    "init_dist", "uneven_all_gather", "cublaslt_gemm_nt", "cublaslt_gemm_nn", "cublaslt_gemm_tn",
    "cublaslt_gemm_tt", "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
}

# Launchers some calls must reach: FP8 x FP4 Mega MoE widens its FP4 weights for the fp8 MX cube.
LAUNCHES = {"fp8_fp4_mega_moe": {"dga_npu_launch_convert_rows", "dga_npu_launch_gemm_fp8_mx_contiguous",
                                 "dga_npu_launch_swiglu", "dga_npu_launch_mega_moe_gather"},
            "tf32_hc_prenorm_gemm": {"dga_npu_launch_hc_prenorm_gemm"}}

BF16, FP32 = torch.bfloat16, torch.float32


def bf16(*shape):
    return torch.randn(*shape).to(BF16)


def fp8_rows(x, gran_k=128):  # per-token (1, gran_k) float32 scales
    return dg.per_token_cast_to_fp8(x, use_ue8m0=False, gran_k=gran_k)


def contiguous_layout(groups, rows):
    return torch.arange(groups, dtype=torch.int32).repeat_interleave(rows)


def _gemm(layout):
    m, n, k = 64, 64, 128
    a = bf16(k, m) if layout[0] == "t" else bf16(m, k)  # stored as upstream takes them
    b = bf16(k, n) if layout[1] == "n" else bf16(n, k)
    return lambda: getattr(dg, f"bf16_gemm_{layout}")(a, b, torch.empty(m, n, dtype=BF16))


def _fp8_gemm(name):  # DeepSeek's (1, 128) x (128, 128) recipe, operands stored as upstream takes them
    def call():
        import test_gemm_fp8 as tf
        layout = name[-2:]
        qa = tf.Quantised(torch.randn(64, 256), "fp8", 1, 128, False)
        qb = tf.Quantised(torch.randn(64, 256), "fp8", 128, 128, False)
        getattr(dg, name)(qa.stored(layout[0] == "t"), qb.stored(layout[1] == "n"), torch.empty(64, 64, dtype=BF16),
                          recipe_a=(1, 128), recipe_b=(128, 128))
    return call


def _skip_head_mid():
    import test_gemm_fp8 as tf
    qa = tf.Quantised(torch.randn(64, 256), "fp8", 1, 128, False)
    qb = tf.Quantised(torch.randn(256, 256), "fp8", 128, 128, False)
    dg.fp8_gemm_nt_skip_head_mid((qa.q, qa.sf), (qb.q, qb.sf), torch.empty(64, 320, dtype=BF16), (128, 64, 128))


def _m_grouped(name, fp8, nn=False):
    def call():
        g, rows, n, k = 2, 128, 64, 256
        x = torch.randn(g * rows, k)
        w = torch.randn(g, k, n) if nn else torch.randn(g, n, k)
        a = fp8_rows(x) if fp8 else x.to(BF16)
        b = (torch.stack([dg.per_block_cast_to_fp8(wi, use_ue8m0=False)[0] for wi in w]),
             torch.stack([dg.per_block_cast_to_fp8(wi, use_ue8m0=False)[1] for wi in w])) if fp8 else w.to(BF16)
        getattr(dg, name)(a, b, torch.empty(g * rows, n, dtype=BF16), contiguous_layout(g, rows))
    return call


def _masked(name, fp8):
    def call():
        g, m, n, k = 2, 64, 64, 256
        x, w = torch.randn(g, m, k), torch.randn(g, n, k)
        if fp8:
            a = tuple(torch.stack(t) for t in zip(*(fp8_rows(xi) for xi in x)))
            b = tuple(torch.stack(t) for t in zip(*(dg.per_block_cast_to_fp8(wi, use_ue8m0=False) for wi in w)))
        else:
            a, b = x.to(BF16), w.to(BF16)
        getattr(dg, name)(a, b, torch.empty(g, m, n, dtype=BF16), torch.tensor([m, 17], dtype=torch.int32), m)
    return call


def _k_grouped_bf16():
    ks, m, n = [128, 256], 64, 64
    a, b = bf16(sum(ks), m), bf16(sum(ks), n)
    d = torch.zeros(len(ks), m, n)
    dg.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, c=d)


def _k_grouped_fp8(name):
    def call():
        ks, m, n = [128, 256], 64, 64
        if "tn" in name:  # per group: power-of-two channel scales of 128 K rows (the MX cube on the NPU)
            a, b = (tuple(torch.cat(t) for t in zip(*(dg.per_channel_cast_to_fp8(torch.randn(kg, mn), True)
                                                      for kg in ks))) for mn in (m, n))
        else:  # per-row scales of 128 K values; B's MN-major (the NPU loads a K block's column scales as one run)
            a, (qb, sb) = fp8_rows(torch.randn(m, sum(ks))), fp8_rows(torch.randn(n, sum(ks)))
            b = (qb, sb.T.contiguous().T)
        d = torch.zeros(len(ks), m, n)
        getattr(dg, name)(a, b, d, ks, c=d)
    return call


def _einsum(expr):
    shapes = {"bhr,hdr->bhd": ((4, 2, 64), (2, 32, 64), (4, 2, 32)),
              "bhd,hdr->bhr": ((4, 2, 32), (2, 32, 64), (4, 2, 64)),
              "bmk,bnk->mn": ((2, 32, 64), (2, 48, 64), (32, 48))}
    sa, sb, sd = shapes[expr]
    d = torch.zeros(sd) if expr == "bmk,bnk->mn" else torch.empty(sd, dtype=BF16)
    return lambda: dg.einsum(expr, bf16(*sa), bf16(*sb), d, c=d if expr == "bmk,bnk->mn" else None)


def _fp8_einsum():
    x, w = torch.randn(4, 2, 128), torch.randn(2, 128, 128)
    a = fp8_rows(x.reshape(8, 128))
    b = tuple(torch.stack(t) for t in zip(*(dg.per_block_cast_to_fp8(wi, use_ue8m0=False) for wi in w)))
    dg.fp8_einsum("bhr,hdr->bhd", (a[0].view(4, 2, 128), a[1].view(4, 2, 1)), b, torch.empty(4, 2, 128, dtype=BF16))


def _hc():
    dg.tf32_hc_prenorm_gemm(bf16(16, 256), torch.randn(24, 256), torch.empty(2, 16, 24), torch.empty(2, 16), 2)


def _mqa(name):
    def call():
        s, h, d, skv = 4, 8, 64, 64
        q = torch.randn(s, h, d).to(torch.float8_e4m3fn)
        kv = dg.per_custom_dims_cast_to_fp8(torch.randn(skv, d), (0,), False)
        ks, ke = torch.zeros(s, dtype=torch.int32), torch.full((s,), skv, dtype=torch.int32)
        legacy = name == "fp8_mqa_logits"
        getattr(dg, name)(q if legacy else (q, None), kv, torch.randn(s, h), ks, ke)
    return call


def _paged(name):
    def call():
        import test_paged_mqa_logits as tp
        b, block_kv, d, h = 2, 64, 64, 8
        cache, perm, _ = tp.build_cache(torch.randn(2 * block_kv, d), block_kv, 4, False)
        lens = torch.tensor([[block_kv], [2 * block_kv]], dtype=torch.int32)
        table = torch.zeros(b, 4, dtype=torch.int32)
        table[0, 0], table[1, 0], table[1, 1] = perm[0], perm[0], perm[1]
        meta = dg.get_paged_mqa_logits_metadata(lens, block_kv, dg.get_num_ai_cores())
        q = torch.randn(b, 1, h, d).to(torch.float8_e4m3fn)
        fn = getattr(dg, name)
        q_arg = q if name == "fp8_paged_mqa_logits" else (q, None)
        fn(q_arg, cache, torch.randn(b, h), lens, table, meta, 2 * block_kv)
    return call


def _metadata():
    dg.get_paged_mqa_logits_metadata(torch.tensor([[64], [128]], dtype=torch.int32), 64, dg.get_num_ai_cores())


def _mega(fp8):
    def call():
        hidden, inter, experts, topk, tokens = 256, 128, 2, 2, 16  # few experts: the model computes 384 rows each
        buf = dg.mega.SymmBuffer(None, experts, 384, topk, hidden, inter,
                                 mma_type="fp8xfp4" if fp8 else "bf16xbf16", num_ring_tokens=384)
        w = tm.make_weights(experts, hidden, inter, 0, 1, fp8=fp8)
        tm.fill_buffer(buf, tm.make_rank_inputs(tokens, hidden, experts, topk, 0, fp8=fp8))
        y = torch.empty(tokens, hidden, dtype=BF16)
        (dg.fp8_fp4_mega_moe if fp8 else dg.bf16_mega_moe)(y, w.l1, w.l2, buf)
    return call


CALLS = {
    **{f"bf16_gemm_{l}": _gemm(l) for l in ("nt", "nn", "tn", "tt")},
    **{f"{p}_gemm_{l}": _fp8_gemm(f"{p}_gemm_{l}") for p in ("fp8", "fp8_fp4") for l in ("nt", "nn", "tn", "tt")},
    "fp8_gemm_nt_skip_head_mid": _skip_head_mid,
    "m_grouped_bf16_gemm_nt_contiguous": _m_grouped("m_grouped_bf16_gemm_nt_contiguous", False),
    "m_grouped_bf16_gemm_nn_contiguous": _m_grouped("m_grouped_bf16_gemm_nn_contiguous", False, nn=True),
    "m_grouped_fp8_gemm_nt_contiguous": _m_grouped("m_grouped_fp8_gemm_nt_contiguous", True),
    "m_grouped_fp8_fp4_gemm_nt_contiguous": _m_grouped("m_grouped_fp8_fp4_gemm_nt_contiguous", True),
    "m_grouped_fp8_gemm_nn_contiguous": _m_grouped("m_grouped_fp8_gemm_nn_contiguous", True, nn=True),
    "m_grouped_fp8_fp4_gemm_nn_contiguous": _m_grouped("m_grouped_fp8_fp4_gemm_nn_contiguous", True, nn=True),
    "m_grouped_bf16_gemm_nt_masked": _masked("m_grouped_bf16_gemm_nt_masked", False),
    "bf16_m_grouped_gemm_nt_masked": _masked("bf16_m_grouped_gemm_nt_masked", False),
    "m_grouped_fp8_gemm_nt_masked": _masked("m_grouped_fp8_gemm_nt_masked", True),
    "fp8_m_grouped_gemm_nt_masked": _masked("fp8_m_grouped_gemm_nt_masked", True),
    "m_grouped_fp8_fp4_gemm_nt_masked": _masked("m_grouped_fp8_fp4_gemm_nt_masked", True),
    "k_grouped_bf16_gemm_tn_contiguous": _k_grouped_bf16,
    "k_grouped_fp8_gemm_tn_contiguous": _k_grouped_fp8("k_grouped_fp8_gemm_tn_contiguous"),
    "k_grouped_fp8_gemm_nt_contiguous": _k_grouped_fp8("k_grouped_fp8_gemm_nt_contiguous"),
    **{f"einsum[{e}]": _einsum(e) for e in ("bhr,hdr->bhd", "bhd,hdr->bhr", "bmk,bnk->mn")},
    "fp8_einsum": _fp8_einsum,
    "tf32_hc_prenorm_gemm": _hc,
    "fp8_mqa_logits": _mqa("fp8_mqa_logits"),
    "fp8_fp4_mqa_logits": _mqa("fp8_fp4_mqa_logits"),
    "fp8_paged_mqa_logits": _paged("fp8_paged_mqa_logits"),
    "fp8_fp4_paged_mqa_logits": _paged("fp8_fp4_paged_mqa_logits"),
    "get_paged_mqa_logits_metadata": _metadata,
    "fp8_fp4_mega_moe": _mega(True),
    "bf16_mega_moe": _mega(False),
}


@pytest.fixture
def npu_model():
    before = runtime.get_backend()
    runtime.set_backend("npu-model")
    _C.take_npu_model_launches()
    yield
    runtime.set_backend(before)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_reaches_an_npu_kernel_or_is_listed_missing(name, npu_model):
    torch.manual_seed(0)
    entry = name.split("[")[0]
    if entry in MISSING:
        with pytest.raises(NotImplementedError, match="no NPU kernel"):
            CALLS[name]()
        assert _C.take_npu_model_launches() == []
        return
    CALLS[name]()
    launches = _C.take_npu_model_launches()
    if entry in TORCH_OPS:
        assert launches == []
        return
    assert launches and all(e.startswith("dga_npu_launch_") for e in launches), launches
    assert LAUNCHES.get(name, set()) <= set(launches), launches


def test_every_public_kernel_is_covered():
    public = {n for n in dir(dg) if not n.startswith("_") and callable(getattr(dg, n))
              and not isinstance(getattr(dg, n), type(dg))}
    covered = {n.split("[")[0] for n in CALLS} | NOT_KERNELS
    generic = {"gemm", "fp8_gemm", "grouped_gemm", "mqa_logits", "hc_prenorm", "layout", "mega", "runtime", "testing",
               "utils", "vendor_blas"}
    assert sorted(public - covered - generic) == [], "public kernels the dispatch test does not call"


@pytest.mark.skipif(not README.exists(), reason="README not shipped next to an installed package")
def test_readme_lists_the_missing_npu_kernels():
    text = README.read_text()
    section = text[text.index("**Missing today, all on `npu` tensors:**"):text.index("## What is validated")]
    absent = [n for n in MISSING | TORCH_OPS if n not in section]
    assert not absent, f"README's missing list does not name: {absent}"
