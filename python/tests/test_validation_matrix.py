"""The validation matrix: every public function x the classes of bad input that apply to it. Each row
asserts the exception type, that the message starts by naming the argument, and that every output is
byte-for-byte untouched. A public function without a row fails test_every_public_function_has_rows."""
import re
from dataclasses import dataclass
from typing import Callable, Tuple

import pytest
import torch

import deepgemm_ascend as dg

E4M3 = torch.float8_e4m3fn


@dataclass
class Row:
    klass: str        # dtype, rank, shape, stride, alignment, device, scales, recipe, index, size, alias, type, value
    exc: type
    arg: str          # the argument the message must name first
    call: Callable    # () -> (fn, outputs): the failing call and the tensors it must not touch


def bf16(*s):
    return torch.randn(*s).bfloat16()


def fp8(*s):
    return (torch.randn(*s) * 4).to(E4M3)


def out(*s, dtype=torch.float32):
    return torch.full(s, 7.0, dtype=dtype) if dtype.is_floating_point else torch.full(s, 7, dtype=dtype)


def gemm_rows(fn, transposed_a=False, transposed_b=False):
    """Rows of a dense BF16 GEMM alias (A stored [K, M] when transposed_a, B [K, N] when transposed_b)."""
    def ab(m=32, n=48, k=64):
        a = bf16(k, m) if transposed_a else bf16(m, k)
        b = bf16(k, n) if transposed_b else bf16(n, k)
        return a, b

    def shape_mismatch():
        a, b = ab()
        b = b[:, :32] if not transposed_b else b[:32]
        d = out(32, 48)
        return lambda: fn(a, b, d), [d]

    def dtype():
        a, b = ab()
        d = out(32, 48)
        return lambda: fn(a.float(), b, d), [d]

    def rank():
        a, b = ab()
        d = out(32, 48)
        return lambda: fn(a[None], b, d), [d]

    def out_stride():
        a, b = ab()
        d = out(48, 32).T
        return lambda: fn(a, b, d), [d]

    def device():
        a, b = ab()
        d = out(32, 48)
        return lambda: fn(a, b.to("meta"), d), [d]

    def alias():
        a, _ = ab(48, 48, 48)
        _, b = ab(48, 48, 48)
        d = torch.zeros(48, 48, dtype=torch.bfloat16)
        return lambda: fn(d, b, d), [d]

    def not_tensor():
        a, b = ab()
        d = out(32, 48)
        return lambda: fn(a.tolist(), b, d), [d]

    return [Row("dtype", TypeError, "a", dtype), Row("rank", ValueError, "a", rank),
            Row("shape", ValueError, "b", shape_mismatch), Row("stride", ValueError, "d", out_stride),
            Row("device", ValueError, "b", device), Row("alias", ValueError, "d", alias),
            Row("type", TypeError, "a", not_tensor)]


def fp8_gemm_rows(fn, layout="nt"):
    ta, tb = layout[0] == "t", layout[1] == "n"

    def operands():
        a, b = fp8(32, 256), fp8(48, 256)
        sfa, sfb = torch.rand(32, 2), torch.rand(1, 2)
        if ta:
            a, sfa = a.T.contiguous(), sfa.T.contiguous()  # stored [K, M] with scales in the same orientation
        if tb:
            b, sfb = b.T.contiguous(), sfb.T.contiguous()
        return (a, sfa), (b, sfb)

    def scales_shape():
        (a, sfa), b = operands()
        d = out(32, 48)
        return lambda: fn((a, sfa[:1] if not ta else sfa[:, :1]), b, d), [d]

    def recipe():
        a, b = operands()
        d = out(32, 48)
        return lambda: fn(a, b, d, recipe=(1, 1, 64)), [d]

    def not_pair():
        (a, _), b = operands()
        d = out(32, 48)
        return lambda: fn(a, b, d), [d]

    def out_dtype():
        a, b = operands()
        d = out(32, 48, dtype=torch.int32)
        return lambda: fn(a, b, d), [d]

    return [Row("scales", ValueError, "sfa", scales_shape), Row("recipe", ValueError, "recipe", recipe),
            Row("type", TypeError, "a", not_pair), Row("dtype", TypeError, "d", out_dtype)]


def contiguous_rows(fn, scaled, layout="nt"):
    def operands():
        a = bf16(256, 128)
        b = bf16(2, 32, 128) if layout == "nt" else bf16(2, 128, 32)
        if scaled:
            aq, sfa = dg.per_token_cast_to_fp8(a, use_ue8m0=False)
            bq = fp8(*b.shape)
            sfb = torch.rand(2, 1, 1)
            return (aq, sfa), (bq, sfb)
        return a, b

    def bad_ids():
        a, b = operands()
        d = out(256, 32, dtype=torch.bfloat16)
        return lambda: fn(a, b, d, torch.full((256,), 5, dtype=torch.int32)), [d]

    def misaligned():
        a, b = operands()
        d = out(256, 32, dtype=torch.bfloat16)
        return lambda: fn(a, b, d, torch.cat([torch.zeros(64), torch.ones(192)]).int()), [d]

    def layout_dtype():
        a, b = operands()
        d = out(256, 32, dtype=torch.bfloat16)
        return lambda: fn(a, b, d, torch.zeros(256, dtype=torch.int64)), [d]

    return [Row("index", ValueError, "grouped_layout", bad_ids), Row("alignment", ValueError, "grouped_layout",
                                                                       misaligned),
            Row("dtype", TypeError, "grouped_layout", layout_dtype)]


def masked_rows(fn, scaled):
    def operands():
        a, b = bf16(2, 64, 128), bf16(2, 32, 128)
        if scaled:
            return (fp8(2, 64, 128), torch.rand(2, 64, 1)), (fp8(2, 32, 128), torch.rand(2, 1, 1))
        return a, b

    def over():
        a, b = operands()
        d = out(2, 64, 32, dtype=torch.bfloat16)
        return lambda: fn(a, b, d, torch.tensor([10, 65], dtype=torch.int32), 32), [d]

    def negative():
        a, b = operands()
        d = out(2, 64, 32, dtype=torch.bfloat16)
        return lambda: fn(a, b, d, torch.tensor([-1, 3], dtype=torch.int32), 32), [d]

    return [Row("index", ValueError, "masked_m", over), Row("size", ValueError, "masked_m", negative)]


def k_grouped_rows(fn, kind):
    def call(ks_sizes, d_shape=(2, 16, 24)):
        d = out(*d_shape)
        if kind == "bf16":
            a, b = bf16(256, 16), bf16(256, 24)
            return lambda: fn(a, b, d, ks_sizes, torch.tensor(ks_sizes, dtype=torch.int32), d), [d]
        if kind == "fp8_tn":
            a, b = fp8(256, 16), fp8(256, 24)
            return lambda: fn((a, torch.rand(2, 16)), (b, torch.rand(2, 24)), d, ks_sizes,
                              torch.tensor(ks_sizes, dtype=torch.int32), d), [d]
        a, b = fp8(16 * 256), fp8(24 * 256)
        return lambda: fn((a, torch.rand(16, 2)), (b, torch.rand(24, 2)), d, ks_sizes,
                          torch.tensor(ks_sizes, dtype=torch.int32), d), [d]

    return [Row("shape", ValueError, "ks", lambda: call([128, 64])),
            Row("shape", ValueError, "d", lambda: call([128, 128], (3, 16, 24)))]


def mqa_rows(fn, legacy):
    def operands(h=8):
        q = fp8(4, h, 64)
        kv, sf = fp8(40, 64), torch.rand(40)
        return q if legacy else (q, None), (kv, sf), torch.randn(4, h)

    def heads():
        q, kv, w = operands(h=4)
        return lambda: fn(q, kv, w, torch.zeros(4, dtype=torch.int32), torch.full((4,), 40, dtype=torch.int32)), []

    def range_():
        q, kv, w = operands()
        return lambda: fn(q, kv, w, torch.zeros(4, dtype=torch.int32), torch.full((4,), 41, dtype=torch.int32)), []

    def reversed_():
        q, kv, w = operands()
        return lambda: fn(q, kv, w, torch.full((4,), 5, dtype=torch.int32), torch.full((4,), 2, dtype=torch.int32)), []

    return [Row("shape", ValueError, "q", heads), Row("index", ValueError, "cu_seq_len_k_end", range_),
            Row("index", ValueError, "cu_seq_len_k_end", reversed_)]


def paged_rows(fn, legacy):
    def operands(table_value=0, h=8):
        q = fp8(2, 1, h, 64)
        cache = torch.randint(0, 255, (4, 64, 1, 68), dtype=torch.uint8)
        w = torch.randn(2, h)
        lens = torch.tensor([[40], [64]], dtype=torch.int32)
        table = torch.full((2, 2), table_value, dtype=torch.int32)
        meta = dg.get_paged_mqa_logits_metadata(lens, 64, dg.get_num_ai_cores())
        return (q if legacy else (q, None)), cache, w, lens, table, meta

    def bad_block():
        q, cache, w, lens, table, meta = operands(table_value=9)
        return lambda: fn(q, cache, w, lens, table, meta, 64), []

    def bad_len():
        q, cache, w, lens, table, meta = operands()
        return lambda: fn(q, cache, w, lens, table, meta, 32), []

    def heads():
        q, cache, w, lens, table, meta = operands(h=24)
        return lambda: fn(q, cache, w, lens, table, meta, 64), []

    return [Row("index", ValueError, "block_table", bad_block), Row("size", ValueError, "max_context_len", bad_len),
            Row("shape", ValueError, "q", heads)]


def simple(klass, exc, arg, fn, *args, outputs=()):
    return Row(klass, exc, arg, lambda: ((lambda: fn(*args)), list(outputs)))


def build_matrix():
    m = {}
    for lay, (ta, tb) in {"nt": (False, False), "nn": (False, True), "tn": (True, True), "tt": (True, False)}.items():
        m[f"bf16_gemm_{lay}"] = gemm_rows(getattr(dg, f"bf16_gemm_{lay}"), ta, tb)
        for prefix in ("fp8_fp4_gemm_", "fp8_gemm_"):
            m[prefix + lay] = fp8_gemm_rows(getattr(dg, prefix + lay), lay)
    for name in ("m_grouped_bf16_gemm_nt_contiguous", "m_grouped_bf16_gemm_nn_contiguous"):
        m[name] = contiguous_rows(getattr(dg, name), False, name[-13:-11])
    for name in ("m_grouped_fp8_fp4_gemm_nt_contiguous", "m_grouped_fp8_gemm_nt_contiguous",
                 "m_grouped_fp8_fp4_gemm_nn_contiguous", "m_grouped_fp8_gemm_nn_contiguous"):
        m[name] = contiguous_rows(getattr(dg, name), True, name[-13:-11])
    for name in ("m_grouped_bf16_gemm_nt_masked", "bf16_m_grouped_gemm_nt_masked"):
        m[name] = masked_rows(getattr(dg, name), False)
    for name in ("m_grouped_fp8_fp4_gemm_nt_masked", "m_grouped_fp8_gemm_nt_masked", "fp8_m_grouped_gemm_nt_masked"):
        m[name] = masked_rows(getattr(dg, name), True)
    m["k_grouped_bf16_gemm_tn_contiguous"] = k_grouped_rows(dg.k_grouped_bf16_gemm_tn_contiguous, "bf16")
    m["k_grouped_fp8_gemm_tn_contiguous"] = k_grouped_rows(dg.k_grouped_fp8_gemm_tn_contiguous, "fp8_tn")
    m["k_grouped_fp8_gemm_nt_contiguous"] = k_grouped_rows(dg.k_grouped_fp8_gemm_nt_contiguous, "fp8_nt")
    m["fp8_fp4_mqa_logits"] = mqa_rows(dg.fp8_fp4_mqa_logits, False)
    m["fp8_mqa_logits"] = mqa_rows(dg.fp8_mqa_logits, True)
    m["fp8_fp4_paged_mqa_logits"] = paged_rows(dg.fp8_fp4_paged_mqa_logits, False)
    m["fp8_paged_mqa_logits"] = paged_rows(dg.fp8_paged_mqa_logits, True)
    m["get_paged_mqa_logits_metadata"] = [
        simple("dtype", TypeError, "context_lens", dg.get_paged_mqa_logits_metadata, torch.ones(2), 64, 2),
        simple("value", ValueError, "block_kv", dg.get_paged_mqa_logits_metadata,
               torch.ones(2, 1, dtype=torch.int32), 48, 2)]
    hc_d, hc_s = out(16, 24), out(16)
    m["tf32_hc_prenorm_gemm"] = [
        simple("dtype", TypeError, "b", dg.tf32_hc_prenorm_gemm, bf16(16, 128), bf16(24, 128), hc_d, hc_s,
               outputs=(hc_d, hc_s)),
        simple("shape", ValueError, "sqr_sum", dg.tf32_hc_prenorm_gemm, bf16(16, 128), torch.randn(24, 128), hc_d,
               out(8), outputs=(hc_d,))]
    e_d = out(4, 8, 16, dtype=torch.bfloat16)
    m["einsum"] = [simple("value", ValueError, "expr", dg.einsum, "ij,jk->ik", bf16(4, 8, 32), bf16(8, 16, 32), e_d,
                          outputs=(e_d,)),
                   simple("dtype", TypeError, "a", dg.einsum, "bhr,hdr->bhd", torch.randn(4, 8, 32), bf16(8, 16, 32),
                          e_d, outputs=(e_d,))]
    m["fp8_einsum"] = [simple("type", TypeError, "a", dg.fp8_einsum, "bhr,hdr->bhd", fp8(4, 8, 128),
                              (fp8(8, 128, 128), torch.rand(8, 1, 1)), out(4, 8, 128, dtype=torch.bfloat16))]
    m["get_mk_alignment_for_contiguous_layout"] = [simple("type", TypeError, "get_mk_alignment_for_contiguous_layout",
                                                          dg.get_mk_alignment_for_contiguous_layout, 1)]
    m["get_m_alignment_for_contiguous_layout"] = m["get_mk_alignment_for_contiguous_layout"]
    m["get_k_alignment_for_contiguous_layout"] = m["get_mk_alignment_for_contiguous_layout"]
    m["set_mk_alignment_for_contiguous_layout"] = [
        simple("value", ValueError, "alignment", dg.set_mk_alignment_for_contiguous_layout, 24),
        simple("type", TypeError, "alignment", dg.set_mk_alignment_for_contiguous_layout, 16.0)]
    m["get_theoretical_mk_alignment_for_contiguous_layout"] = [
        simple("value", ValueError, "expected_m", dg.get_theoretical_mk_alignment_for_contiguous_layout, 0)]
    # layouts and quantisation helpers
    m["transform_sf_into_required_layout"] = [
        simple("dtype", TypeError, "sf", dg.transform_sf_into_required_layout, torch.ones(4, 2).half(), 4, 256,
               (1, 128)),
        simple("recipe", ValueError, "recipe", dg.transform_sf_into_required_layout, torch.ones(4, 2), 4, 256, (1, 64))]
    for name in ("get_mn_major_tma_aligned_tensor", "get_mn_major_packed_ue8m0x2_tensor",
                 "get_mn_major_tma_aligned_packed_ue8m0_tensor"):
        m[name] = [simple("rank", ValueError, "sf", getattr(dg, name), torch.ones(2, 2, 2, 2))]
    # A predicate documented never to raise: bad input is answered False.
    m["is_ascend_sf_layout"] = [simple("type", None, "", dg.is_ascend_sf_layout, [1, 2]),
                                simple("stride", None, "", dg.is_ascend_sf_layout, torch.zeros(4, 8, dtype=torch.int16))]
    m["get_tma_aligned_size"] = [simple("value", ValueError, "element_size", dg.get_tma_aligned_size, 10, 3)]
    for name in ("per_token_cast_to_fp8", "per_token_cast_to_fp4", "per_block_cast_to_fp8", "per_channel_cast_to_fp8"):
        m[name] = [simple("rank", ValueError, "x", getattr(dg, name), torch.ones(4), True),
                   simple("type", TypeError, "use_ue8m0", getattr(dg, name), torch.ones(128, 128), "yes")]
    m["per_custom_dims_cast_to_fp8"] = [simple("value", ValueError, "dims", dg.per_custom_dims_cast_to_fp8,
                                               torch.ones(4, 8), (5,), False)]
    m["cast_back_from_fp4"] = [simple("dtype", TypeError, "sf", dg.cast_back_from_fp4,
                                      torch.zeros(4, 64, dtype=torch.uint8), torch.ones(4, 1, dtype=torch.int32))]
    m["transpose_packed_fp4"] = [simple("value", ValueError, "packed", dg.transpose_packed_fp4,
                                        torch.zeros(3, 4, dtype=torch.uint8))]
    m["dequant_fp8"] = [simple("dtype", TypeError, "q", dg.dequant_fp8, torch.ones(4, 128, dtype=torch.int32),
                               torch.ones(4, 1), 1, 128)]
    m["dequant_fp4"] = [simple("dtype", TypeError, "packed", dg.dequant_fp4, torch.ones(4, 64), torch.ones(4, 1), 1,
                               128)]
    m["pack_ue8m0_to_int"] = [simple("dtype", TypeError, "sf", dg.pack_ue8m0_to_int, torch.ones(4, 4, dtype=torch.int64))]
    m["unpack_ue8m0_from_int"] = [simple("dtype", TypeError, "packed", dg.unpack_ue8m0_from_int, torch.ones(4, 1))]
    m["ceil_to_ue8m0"] = [simple("type", TypeError, "x", dg.ceil_to_ue8m0, [1.0])]
    m["ceil_div"] = [simple("value", ValueError, "y", dg.ceil_div, 4, 0)]
    m["align"] = [simple("value", ValueError, "y", dg.align, 4, 0)]
    # runtime
    for name in ("set_num_ai_cores", "set_num_sms"):
        m[name] = [simple("value", ValueError, "num_ai_cores", getattr(dg, name), -1),
                   simple("type", TypeError, "num", getattr(dg, name), 1.5)]
    for name in ("get_num_ai_cores", "get_num_sms", "info", "is_checked_mode", "get_cmake_dir"):
        m[name] = [simple("type", TypeError, getattr(dg, name).__name__, getattr(dg, name), 1)]
    m["set_checked_mode"] = [simple("type", TypeError, "on", dg.set_checked_mode, "yes")]
    # upstream's knobs
    m["set_tc_util"] = [simple("value", ValueError, "new_tc_util", dg.set_tc_util, 101)]
    m["get_tc_util"] = [simple("type", TypeError, "get_tc_util", dg.get_tc_util, 1)]
    m["set_pdl"] = [simple("type", TypeError, "new_enable_pdl", dg.set_pdl, 1)]
    m["get_pdl"] = [simple("type", TypeError, "get_pdl", dg.get_pdl, 1)]
    m["set_ignore_compile_dims"] = [simple("type", TypeError, "new_value", dg.set_ignore_compile_dims, None)]
    m["set_block_size_multiple_of"] = [simple("value", ValueError, "new_value", dg.set_block_size_multiple_of, 3),
                                       simple("type", TypeError, "new_value", dg.set_block_size_multiple_of, 2.0)]
    # the vendor-BLAS baseline
    for lay in ("nt", "nn", "tn", "tt"):
        fn = getattr(dg, f"cublaslt_gemm_{lay}")
        a = bf16(32, 64) if lay[0] == "n" else bf16(64, 32)
        b = bf16(48, 64) if lay[1] == "t" else bf16(64, 48)
        d = out(32, 48)
        m[f"cublaslt_gemm_{lay}"] = [simple("shape", ValueError, "d", fn, a, b, out(32, 47)),
                                     simple("dtype", TypeError, "b", fn, a, b.float(), d, outputs=(d,))]
    m["fp8_gemm_nt_skip_head_mid"] = [
        simple("value", ValueError, "head_splits", dg.fp8_gemm_nt_skip_head_mid, (fp8(8, 128), torch.ones(8, 1)),
               (fp8(96, 128), torch.ones(96, 1)), out(8, 128, dtype=torch.bfloat16), (64, 32, 64), (1, 1, 128))]
    kg_pack = dg.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    m["get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor"] = [
        simple("dtype", TypeError, "sf", kg_pack, torch.ones(4, 8, dtype=torch.float16), torch.tensor([128], dtype=torch.int32),
               [128], 32, 32),
        simple("dtype", TypeError, "grouped_layout", kg_pack, torch.ones(4, 8), torch.tensor([128]), [128], 32, 32),
        simple("value", ValueError, "gran_k", kg_pack, torch.ones(4, 8), torch.tensor([128], dtype=torch.int32), [128],
               64, 64),
        simple("value", ValueError, "k_alignment", kg_pack, torch.ones(4, 8), torch.tensor([128], dtype=torch.int32),
               [128], 32, 48),
        simple("value", ValueError, "ks_cpu", kg_pack, torch.ones(4, 8), torch.tensor([128], dtype=torch.int32), [128, 0],
               32, 32)]
    # upstream's distributed helpers (before any process group exists)
    m["init_dist"] = [simple("type", TypeError, "local_rank", dg.init_dist, "0", 1)]
    m["uneven_all_gather"] = [simple("type", TypeError, "tensor", dg.uneven_all_gather, [1, 2])]
    m["set_host_isa"] = [simple("value", ValueError, "host ISA", dg.set_host_isa, "sse9")]
    # Mega MoE
    m["get_symm_buffer_for_mega_moe"] = [
        simple("value", ValueError, "hidden", dg.get_symm_buffer_for_mega_moe, None, 8, 16, 6, 200, 128),
        simple("type", TypeError, "num_topk", dg.get_symm_buffer_for_mega_moe, None, 8, 16, 6.0, 256, 128)]
    m["SymmBuffer"] = [simple("value", ValueError, "num_ring_tokens", dg.SymmBuffer, None, 8, 384, 6, 256, 128, 10)]
    m["transform_weights_for_mega_moe"] = [
        simple("type", TypeError, "l1_weights", dg.transform_weights_for_mega_moe, (torch.zeros(1, 32, 64),) * 2,
               torch.zeros(1, 64, 16))]
    buf = dg.get_symm_buffer_for_mega_moe(None, 4, 8, 2, 256, 128)
    y = out(8, 256, dtype=torch.bfloat16)
    w8 = (torch.zeros(4, 256, 128, dtype=torch.int8), torch.zeros(4, 256, 2, dtype=torch.int32))
    w2 = (torch.zeros(4, 256, 64, dtype=torch.int8), torch.zeros(4, 256, 1, dtype=torch.int32))
    m["fp8_fp4_mega_moe"] = [simple("dtype", TypeError, "y", dg.fp8_fp4_mega_moe, y.float(), w8, w2, buf),
                             simple("recipe", ValueError, "recipe", dg.fp8_fp4_mega_moe, y, w8, w2, buf, None,
                                    (1, 1, 128), outputs=(y,))]
    m["bf16_mega_moe"] = [simple("value", ValueError, "sym_buffer", dg.bf16_mega_moe, y, torch.zeros(4, 256, 256),
                                 torch.zeros(4, 256, 128), buf, outputs=(y,))]
    return m


MATRIX = build_matrix()
CASES = [(name, i) for name, rows in sorted(MATRIX.items()) for i in range(len(rows))]


def test_every_public_function_has_rows():
    public = {n for n in dir(dg) if not n.startswith("_") and callable(getattr(dg, n))}
    missing = sorted(public - set(MATRIX))
    assert not missing, f"public functions without a validation row: {missing}"


@pytest.mark.parametrize("name, i", CASES, ids=[f"{n}-{MATRIX[n][i].klass}-{i}" for n, i in CASES])
def test_bad_input_is_refused(name, i):
    row = MATRIX[name][i]
    fn, outputs = row.call()
    if row.exc is None:  # predicates answer bad input with False
        assert fn() is False
        return
    snapshots = [o.clone() for o in outputs]
    with pytest.raises(row.exc) as info:
        fn()
    msg = str(info.value)
    assert re.search(rf"\b{re.escape(row.arg)}\b", msg), f"{name}: message does not name '{row.arg}': {msg}"
    for o, s in zip(outputs, snapshots):
        assert torch.equal(o.view(torch.uint8) if o.dtype == E4M3 else o, s.view(torch.uint8) if s.dtype == E4M3
                           else s), f"{name}: output written despite the error"
