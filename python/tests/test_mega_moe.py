"""Mega MoE: buffer layout and helpers, the weight transform, the SwiGLU stage, the fused kernel against
the unfused pipeline (bitwise) and a float64 reference on 1, 2, 4 and 8 ranks, failing peers, and
argument validation."""
import math

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import _C
from deepgemm_ascend.mega import swiglu_quant
from deepgemm_ascend.testing import mega_moe as tm
from deepgemm_ascend.testing.distributed import run_ranks, run_ranks_outcomes
from deepgemm_ascend.testing.numeric import calc_diff
from deepgemm_ascend.utils.math import unpack_ue8m0_from_int

FP4_DIFF = 2e-2  # upstream's threshold with one FP4 operand pair and FP8 re-quantisation
BF16_DIFF = 1e-4


# ---- sizing helpers and layout ---------------------------------------------------------------

def test_token_alignment_and_ring_limits():
    assert _C.get_token_alignment_for_mega_moe() == 384
    n, e, topk, w = 384, 4, 6, 8
    lo, hi = _C.get_ring_limit_for_mega_moe(n, e, topk, w)
    assert lo == n * w
    assert hi == min(n * w * e, math.ceil((n * w * topk + e * 383) / 384) * 384)
    assert _C.get_default_ring_tokens_for_mega_moe(n, e, topk, w) == hi  # decode reference ring is larger
    assert _C.get_default_ring_tokens_for_mega_moe(6144, 48, 6, 72) == 786432  # prefill ring
    assert _C.get_default_ring_tokens_for_mega_moe(6144, 48, 6, 8) == _C.get_ring_limit_for_mega_moe(6144, 48, 6, 8)[1]


def test_get_symm_buffer_rounds_tokens_and_exposes_views():
    buf = dg.get_symm_buffer_for_mega_moe(None, 8, 100, 6, 256, 128)
    assert buf.num_max_tokens_per_rank == 384
    n, ring = 384, buf.num_ring_tokens
    assert ring >= n
    assert buf.x.shape == (n, 256) and buf.x.dtype == torch.float8_e4m3fn
    assert buf.x_sf.shape == (n, 2) and buf.x_sf.dtype == torch.int32
    assert buf.topk_idx.shape == (n, 6) and buf.topk_idx.dtype == torch.int64
    assert buf.topk_weights.shape == (n, 6) and buf.topk_weights.dtype == torch.float32
    assert buf.l1_acts.shape == (ring, 256) and buf.l2_acts.shape == (ring, 128)
    assert buf.l1_acts_sf.stride() == (1, (ring + 3) // 4 * 4) and buf.l2_acts_sf.shape == (ring, 1)
    assert len(buf.handle.buffer_ptrs) == 1 and buf.handle.buffer_ptrs[0] == buf.buffer.data_ptr()
    views = [buf.x, buf.x_sf, buf.topk_idx, buf.topk_weights, buf.l1_acts, buf.l1_acts_sf, buf.l2_acts, buf.l2_acts_sf]
    spans = sorted((v.data_ptr(), v.data_ptr() + (sum((d - 1) * st for d, st in zip(v.shape, v.stride())) + 1)
                    * v.element_size()) for v in views)
    base = buf.buffer.data_ptr()
    assert spans[0][0] >= base + 4096 and spans[-1][1] <= base + buf.num_bytes
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "views overlap"
    bf = dg.get_symm_buffer_for_mega_moe(None, 8, 1, 6, 256, 128, mma_type="bf16xbf16")
    assert bf.x.dtype == torch.bfloat16 and bf.x_sf is None and bf.l1_acts_sf is None
    buf.destroy()
    assert buf.buffer is None


@pytest.mark.parametrize("kwargs, exc, pattern", [
    (dict(num_experts=0), ValueError, "^num_experts"),
    (dict(num_topk=33), ValueError, "^num_topk"),
    (dict(hidden=200), ValueError, "^hidden"),
    (dict(intermediate_hidden=64), ValueError, "^intermediate_hidden"),
    (dict(mma_type="fp8xfp8"), ValueError, "^mma_type"),
    (dict(activation="gelu"), ValueError, "^activation"),
    (dict(use_fp8_dispatch=False), ValueError, "^use_fp8_dispatch"),
    (dict(num_max_tokens_per_rank=-1), ValueError, "^num_max_tokens_per_rank"),
    (dict(num_topk=2.0), TypeError, "^num_topk"),
])
def test_get_symm_buffer_rejects_bad_sizes(kwargs, exc, pattern):
    args = dict(group=None, num_experts=8, num_max_tokens_per_rank=16, num_topk=6, hidden=256,
                intermediate_hidden=128)
    args.update(kwargs)
    with pytest.raises(exc, match=pattern):
        dg.get_symm_buffer_for_mega_moe(**args)


# ---- weight transform ----------------------------------------------------------------------------

def test_transform_interleaves_gate_and_up_rows_by_eight():
    e, inter, k = 2, 32, 64
    w1 = torch.randint(-128, 127, (e, 2 * inter, k // 2), dtype=torch.int8)
    sf1 = torch.randint(0, 2 ** 30, (e, 2 * inter, k // 128 + 1), dtype=torch.int32)
    w2 = torch.randint(-128, 127, (e, k, inter // 2), dtype=torch.int8)
    sf2 = torch.randint(0, 2 ** 30, (e, k, 1), dtype=torch.int32)
    (t1, ts1), (t2, ts2) = dg.transform_weights_for_mega_moe((w1, sf1), (w2, sf2))
    for b in range(inter // 8):
        for s in range(2):
            for j in range(8):
                assert torch.equal(t1[:, 16 * b + 8 * s + j], w1[:, s * inter + 8 * b + j])
                assert torch.equal(ts1[:, 16 * b + 8 * s + j], sf1[:, s * inter + 8 * b + j])
    assert t2 is w2 and ts2 is sf2
    # MN-major scales keep their strides.
    mn = sf1.transpose(1, 2).contiguous().transpose(1, 2)
    (_, tmn), _ = dg.transform_weights_for_mega_moe((w1, mn), (w2, sf2))
    assert tmn.stride() == mn.stride() and torch.equal(tmn, ts1)
    b1 = torch.randn(e, 2 * inter, k).bfloat16()
    tb1, tb2 = dg.transform_weights_for_mega_moe(b1, w2)
    assert torch.equal(tb1[:, 8:16], b1[:, inter:inter + 8]) and tb2 is w2


def test_transform_widens_fp4_to_e4m3_for_the_npu_kernels():
    e, inter, k = 2, 16, 64
    gen = torch.Generator().manual_seed(3)
    w1 = torch.randint(-128, 128, (e, 2 * inter, k // 2), dtype=torch.int8, generator=gen)
    w2 = torch.randint(-128, 128, (e, k, inter // 2), dtype=torch.int8, generator=gen)
    sf1 = torch.randint(0, 2 ** 30, (e, 2 * inter, 1), dtype=torch.int32, generator=gen)
    sf2 = torch.randint(0, 2 ** 30, (e, k, 1), dtype=torch.int32, generator=gen)
    (h1, hs1), (h2, _) = dg.transform_weights_for_mega_moe((w1, sf1), (w2, sf2))
    before = dg.runtime.get_backend()
    try:
        dg.runtime.set_backend("npu-model")
        (t1, ts1), (t2, ts2) = dg.transform_weights_for_mega_moe((w1, sf1), (w2, sf2))
    finally:
        dg.runtime.set_backend(before)
    assert t1.dtype == t2.dtype == torch.float8_e4m3fn
    assert t1.shape == (e, 2 * inter, k) and t2.shape == (e, k, inter)
    assert torch.equal(ts1, hs1) and ts2 is sf2
    # Each code pair (low nibble first) becomes two e4m3 values equal to its E2M1 values, -0 kept.
    for wide, packed in ((t1, h1), (t2, w2)):
        b = packed.view(torch.uint8).to(torch.int64)
        codes = torch.stack([b & 0xF, b >> 4], dim=-1).flatten(-2)
        lut = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])
        assert torch.equal(wide.view(torch.uint8), lut[codes].to(torch.float8_e4m3fn).view(torch.uint8))
    with pytest.raises(TypeError, match="l2_weights: expected packed FP4"):
        try:
            dg.runtime.set_backend("npu-model")
            dg.transform_weights_for_mega_moe((w1, sf1), (w2.float(), sf2))
        finally:
            dg.runtime.set_backend(before)


def test_transform_rejects_mixed_paths():
    w = torch.zeros(1, 32, 64, dtype=torch.int8)
    with pytest.raises(TypeError, match="both"):
        dg.transform_weights_for_mega_moe((w, w), w)
    with pytest.raises(ValueError, match="multiple of 16"):
        dg.transform_weights_for_mega_moe(torch.zeros(1, 24, 64), torch.zeros(1, 64, 12))


# ---- the SwiGLU stage --------------------------------------------------------------------------

def _swiglu_f64(h, w, clamp, interleaved):
    inter = h.size(1) // 2
    hf = h.double()
    if interleaved:
        v = hf.view(h.size(0), -1, 2, 8)
        gate, up = v[:, :, 0].reshape(h.size(0), inter), v[:, :, 1].reshape(h.size(0), inter)
    else:
        gate, up = hf[:, :inter], hf[:, inter:]
    if clamp is not None:
        gate, up = gate.clamp(max=clamp), up.clamp(-clamp, clamp)
    return gate * torch.sigmoid(gate) * up * w.double()[:, None]


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("clamp", [None, 3.0])
def test_swiglu_bf16_matches_float64_within_rounding(interleaved, clamp):
    h = (torch.randn(37, 512) * 4).bfloat16()
    w = torch.randn(37)
    act, sf = swiglu_quant(h, w, clamp, use_fp8=False, interleaved=interleaved)
    assert sf is None
    ref = _swiglu_f64(h, w, clamp, interleaved)
    assert torch.allclose(act.double(), ref, rtol=2 ** -7, atol=1e-30)


@pytest.mark.parametrize("clamp", [None, 3.0])
def test_swiglu_fp8_scales_are_powers_of_two_per_32(clamp):
    h = (torch.randn(19, 512) * 4).bfloat16()
    h[3] = 0  # an all-zero row takes the amax floor, not a zero scale
    w = torch.randn(19)
    act, sf = swiglu_quant(h, w, clamp)
    assert act.dtype == torch.float8_e4m3fn and sf.shape == (19, 2)
    ref = _swiglu_f64(h, w, clamp, False)
    scales = unpack_ue8m0_from_int(sf).double()  # [19, 8]
    amax = ref.abs().view(19, 8, 32).amax(-1).clamp(min=1e-4)
    assert torch.all(scales >= amax / 448 * (1 - 1e-6)) and torch.all(scales < amax / 448 * 2 * (1 + 1e-6))
    deq = (act.double().view(19, 8, 32) * scales[..., None]).view(19, 256)
    assert torch.all((deq - ref).abs() <= ref.abs() * 2 ** -4 + scales.repeat_interleave(32, 1) * 2 ** -9)
    assert torch.all(act[3].float() == 0)


def _swiglu_outputs(m, inter, fp8, sf_mn_major):
    """Poisoned outputs of the SwiGLU stage: e4m3 (or bf16) [m, inter] and UE8M0 words, K- or MN-major."""
    act = torch.full((m, inter), 0x55 if fp8 else 0x5555, dtype=torch.uint8 if fp8 else torch.int16)
    act = act.view(torch.float8_e4m3fn if fp8 else torch.bfloat16)
    if not fp8:
        return act, None
    words = inter // 128
    sf = torch.full((words, m) if sf_mn_major else (m, words), -0x2A2A2A2B, dtype=torch.int32)
    return act, (sf.T if sf_mn_major else sf)


@pytest.mark.skipif("npu-model" not in dg.info()["backends"], reason="no NPU model library")
@pytest.mark.parametrize("m,inter,interleaved,fp8,clamp,sf_mn_major", [
    (1, 128, True, True, None, False),
    (7, 384, False, True, 3.0, True),    # [gate | up] halves, MN-major scale words (the Mega MoE ring's)
    (5, 256, True, False, 2.0, False),   # bf16 output
    (3, 640, False, False, None, False),
    (2, 12160, True, True, 5.0, True),   # two chunks of a row, the second a 128-value tail
    (0, 256, True, True, None, False),
])
def test_swiglu_npu_kernel_on_the_model_matches_the_host(m, inter, interleaved, fp8, clamp, sf_mn_major):
    from deepgemm_ascend import _ops, runtime
    wide = (torch.randn(m, 2 * inter + 64) * 4).bfloat16()
    h = wide[:, 64:]  # a row stride past 2I
    h[:, :64] = 0  # all-zero groups take the amax floor
    w = torch.randn(m)
    clamp_arg = -1.0 if clamp is None else clamp
    outs = {}
    before = runtime.get_backend()
    try:
        for backend in ("host", "npu-model"):
            runtime.set_backend(backend)
            act, sf = _swiglu_outputs(m, inter, fp8, sf_mn_major)
            _ops.mega_moe_swiglu(h, w, act, sf, clamp_arg, True, interleaved)
            outs[backend] = (act, sf)
    finally:
        runtime.set_backend(before)
    (a0, s0), (a1, s1) = outs["host"], outs["npu-model"]
    # The model's exp and division are IEEE fp32 like the host's: bit for bit (hardware: within rounding).
    assert torch.equal(a0.view(torch.uint8), a1.view(torch.uint8))
    if fp8:
        assert torch.equal(s0, s1)
    if m == 0:
        return
    deq = a1.double()
    if fp8:
        deq = (deq.view(m, -1, 32) * unpack_ue8m0_from_int(s1.contiguous()).double()[..., None]).view(m, inter)
    assert calc_diff(deq, _swiglu_f64(h, w, clamp, interleaved)) < (1e-3 if fp8 else 1e-5)


def test_swiglu_rejects_bad_arguments():
    h = torch.randn(4, 256).bfloat16()
    with pytest.raises(TypeError, match="^h"):
        swiglu_quant(h.float(), torch.ones(4))
    with pytest.raises(ValueError, match="^topk_weights"):
        swiglu_quant(h, torch.ones(5))
    with pytest.raises(ValueError, match="^activation_clamp"):
        swiglu_quant(h, torch.ones(4), -1.0)


# ---- fused vs unfused, one rank ------------------------------------------------------------------

def _assert_report(report, fp8):
    for r in report:
        where = f"{r['scenario']} call {r['call']}"
        assert r["equal"], f"fused != unfused ({where}): max abs {r['max_abs']}"
        assert r["stats_equal"], f"receive stats differ ({where})"
        assert r["finite"], where
        assert r["diff"] < (FP4_DIFF if fp8 else BF16_DIFF), f"calc_diff {r['diff']} ({where})"


@pytest.mark.parametrize("fp8", [True, False], ids=["fp8xfp4", "bf16"])
@pytest.mark.parametrize("topk", [6, 8])
def test_single_rank_matches_unfused_bitwise(fp8, topk):
    scenarios = [tm.Scenario(topk=topk, fp8=fp8, tokens=(45,), masked_ratio=0.2, clamp=10.0),
                 tm.Scenario(topk=topk, fp8=fp8, tokens=(1,), num_experts=8, hidden=384, inter=256),
                 tm.Scenario(topk=topk, fp8=fp8, tokens=(0,), calls=1)]
    report = tm.check_rank(0, 1, None, scenarios)
    _assert_report(report, fp8)
    assert report[0]["received"] > 0


@pytest.mark.parametrize("huge_expert", [None, 1], ids=["all_fold", "one_expert_promotes"])
def test_single_rank_folds_the_experts_the_unfused_pipeline_folds(huge_expert):
    # K of 1024 in both GEMMs: folded and promoted K sums round differently here, so the fused and the unfused
    # results agree bitwise only if both fold exactly the same experts' UE8M0 scales (the grouped GEMM decides per
    # group, the fused kernel per expert; the huge expert's weight and activation scales do not fold).
    sc = tm.Scenario(num_experts=8, hidden=1024, inter=1024, tokens=(48,), huge_expert=huge_expert, calls=1)
    report = tm.check_rank(0, 1, None, [sc])
    _assert_report(report, True)


def test_single_rank_uneven_routing_and_small_ring():
    # Skewed routing and the smallest ring (one expert's worst case): the call runs in several waves.
    t = 300
    buf = dg.mega.SymmBuffer(None, 8, 384, 6, 256, 128, num_ring_tokens=384)
    w = tm.make_weights(8, 256, 128, 0, 1)
    inp = tm.make_rank_inputs(t, 256, 8, 6, 0, skew=3.0)
    tm.fill_buffer(buf, inp)
    y = torch.full((t, 256), float("nan"), dtype=torch.bfloat16)
    dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf)
    y_ref, counts = tm.unfused_mega_moe(inp, w, 8)
    assert counts.sum() > 3 * 384 and counts.max() > 2 * counts.min()
    assert torch.equal(y, y_ref)


def test_debug_env_zeroes_the_buffer_after_each_call(monkeypatch):
    buf = dg.get_symm_buffer_for_mega_moe(None, 8, 16, 6, 256, 128)
    w = tm.make_weights(8, 256, 128, 0, 1)
    inp = tm.make_rank_inputs(16, 256, 8, 6, 0)
    tm.fill_buffer(buf, inp)
    y = torch.empty(16, 256, dtype=torch.bfloat16)
    monkeypatch.setenv("DG_COMM_KERNEL_DEBUG", "1")
    dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf)
    assert torch.all(buf.buffer[4096:] == 0) and torch.all(buf.x.float() == 0)
    assert torch.equal(y, tm.unfused_mega_moe(inp, w, 8)[0])


# ---- the NPU kernels on the instruction model -------------------------------------------------------

needs_model = pytest.mark.skipif("npu-model" not in dg.info()["backends"], reason="no NPU model library")


@needs_model
@pytest.mark.parametrize("world,fp8,widened", [(1, False, False), (2, False, False), (1, True, False),
                                               (2, True, False), (1, True, True)],
                         ids=["bf16-1", "bf16-2", "fp8xfp4-1", "fp8xfp4-2", "fp8xfp4-widened-1"])
def test_on_the_npu_model_matches_the_host(world, fp8, widened):
    # 4 local experts and a ring of two experts per wave: two waves per call; two calls on one buffer.
    # FP8 x FP4: the weights widened to e4m3 on the vector cores on every call (widened: once, by the
    # transform), the fp8 MX cube, SwiGLU to e4m3 + UE8M0.
    sc = tm.Scenario(num_experts=4 * world, topk=4, tokens=(40, 17)[:world], masked_ratio=0.15, clamp=10.0,
                     fp8=fp8, calls=2, widened=widened)
    for rank, report in enumerate(run_ranks(world, tm.check_rank_on_npu_model, sc, 768 * world, timeout=300)):
        for r in report:
            where = f"rank {rank} call {r['call']}"
            assert r["finite"] and r["stats_equal"], where
            assert r["diff_host"] < 1e-7, f"{where}: calc_diff against the host {r['diff_host']}"
            assert r["diff_ref"] < (FP4_DIFF if fp8 else BF16_DIFF), f"{where}: calc_diff against float64 {r['diff_ref']}"


@needs_model
def test_the_npu_route_refuses_what_the_hosts_refuses():
    # One route source: a bad expert id or an expert past its wave's ring fails on the model as on the host,
    # before anything is written to y.
    w = tm.make_weights(4, 256, 128, 0, 1)
    before = dg.runtime.get_backend()
    try:
        for backend in ("host", "npu-model"):
            dg.runtime.set_backend(backend)
            buf = dg.mega.SymmBuffer(None, 4, 384, 2, 256, 128, num_ring_tokens=384)
            inp = tm.make_rank_inputs(300, 256, 4, 2, 0)
            inp.topk_idx[7, 1] = 9
            tm.fill_buffer(buf, inp)
            y = torch.full((300, 256), 7.0, dtype=torch.bfloat16)
            with pytest.raises(ValueError, match=r"^topk_idx: rank 0 token 7 slot 1: expert id 9 is outside \[0, 4\)"):
                dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf)
            inp.topk_idx[:] = 0
            tm.fill_buffer(buf, inp)
            with pytest.raises(ValueError, match=r"^topk_idx: local expert 0 of rank 0 receives 600 rows"):
                dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf)
            assert torch.all(y == 7.0), backend
            buf.destroy()
    finally:
        dg.runtime.set_backend(before)


def test_buffer_device_is_checked():
    class TwoRanks:  # only rank() and size() are asked before the device is checked
        def rank(self):
            return 0

        def size(self):
            return 2

    with pytest.raises(ValueError, match="^device"):
        dg.mega.SymmBuffer(None, 8, 384, 6, 256, 128, 384, "bf16xbf16", device="meta")
    if not hasattr(torch, "npu"):
        with pytest.raises(RuntimeError, match="^device: 'npu' needs torch_npu"):
            dg.mega.SymmBuffer(TwoRanks(), 8, 384, 6, 256, 128, 768, "bf16xbf16", device="npu")
    buf = dg.mega.SymmBuffer(None, 8, 384, 6, 256, 128, 384, "bf16xbf16")
    w = tm.make_weights(8, 256, 128, 0, 1, fp8=False)
    with pytest.raises(ValueError, match="^sym_buffer: is on cpu but y is on meta"):
        dg.bf16_mega_moe(torch.empty(4, 256, dtype=torch.bfloat16, device="meta"), w.l1, w.l2, buf)


def test_npu_ipc_buffers_of_many_ranks(tmp_path):
    # The NPU buffers of several ranks through ACL's IPC memory, on a stand-in for the ACL calls (no NPU
    # here): each rank exports to the others' process ids and imports their keys; importers close first.
    log = tmp_path / "log"
    out = run_ranks(3, tm.npu_ipc_protocol, str(log), timeout=120)
    for rank, o in enumerate(out):
        others = sorted(p["pid"] for r, p in enumerate(out) if r != rank)
        assert o["exports"] == [(3, o["own"], 64, others)]
        assert o["keys"] == [f"key-{r}-{p['pid']}" for r, p in enumerate(out)]
        assert o["ptrs"] == [o["own"] if r == rank else 0x1000 + r for r in range(3)]
    lines = log.read_text().splitlines()
    for r in range(3):
        closes = [i for i, line in enumerate(lines) if line.endswith(f"close {out[r]['keys'][r]}")]
        owner = [i for i in closes if lines[i].startswith(f"{r} ")]
        assert len(closes) == 3 and len(owner) == 1 and owner[0] == max(closes), lines


@pytest.mark.parametrize("fail", ["export", "import"])
def test_npu_ipc_failing_peer_raises_on_every_rank(tmp_path, fail):
    log = tmp_path / "log"
    out = run_ranks(2, tm.npu_ipc_protocol, str(log), 1, fail, timeout=120)
    for o in out:
        assert o["error"].startswith("device: rank 1: RuntimeError: aclrtIpcMem"), o
    lines = log.read_text().splitlines()
    if fail == "export":  # rank 0's key was exported and is closed; nothing was imported
        assert lines == [f"0 close key-0-{out[0]['pid']}"]
    else:  # rank 0 imported rank 1's key: closed before rank 1 closes it; each export closed
        assert sorted(lines) == sorted([f"0 close key-1-{out[1]['pid']}", f"0 close key-0-{out[0]['pid']}",
                                        f"1 close key-1-{out[1]['pid']}"])
        assert lines.index(f"0 close key-1-{out[1]['pid']}") < lines.index(f"1 close key-1-{out[1]['pid']}")


@needs_model
def test_npu_kernels_barrier_names_a_rank_that_never_arrives():
    kind, msg = run_ranks(2, tm.late_rank_on_npu_model, 1, 0.05, timeout=300)[0]
    assert kind == "RuntimeError", (kind, msg)
    assert "rank 1 did not arrive at a Mega MoE barrier" in msg


# ---- many ranks ------------------------------------------------------------------------------------

def _scenarios(world):
    tokens = (40, 17, 0, 33, 25, 1, 38, 12)[:world]
    return [
        tm.Scenario(num_experts=4 * world, topk=6, tokens=tokens, masked_ratio=0.15, clamp=10.0),
        tm.Scenario(num_experts=4 * world, topk=8, tokens=tokens, skew=2.5, skip_rank=world - 1),
        tm.Scenario(num_experts=4 * world, topk=8, tokens=(20,), fp8=False, masked_ratio=0.3, calls=1),
    ]


@pytest.mark.parametrize("world", [2, 4, 8])
def test_many_ranks_match_unfused_bitwise(world):
    reports = run_ranks(world, tm.check_rank, _scenarios(world), timeout=300)
    for rank, report in enumerate(reports):
        _assert_report([r for r in report if r["scenario"].fp8], True)
        _assert_report([r for r in report if not r["scenario"].fp8], False)
    # The skipped rank received nothing in the skewed scenario; the others did.
    skewed = [[r["received"] for r in rep if r["scenario"].skip_rank is not None] for rep in reports]
    assert all(c == 0 for c in skewed[world - 1]) and any(c > 0 for c in skewed[0])


@pytest.mark.parametrize("mode, expect", [("exit", "has exited"), ("hang", "did not arrive within"),
                                          ("bad_arg", "failed: y: expected")])
def test_failing_peer_stops_the_others_with_a_clear_error(mode, expect):
    timeout_s = 2.0
    outcomes = run_ranks_outcomes(4, tm.failing_rank, 1, mode, timeout_s, timeout=120)
    for rank, (ok, value) in enumerate(outcomes):
        if rank == 1:
            continue
        assert ok, value
        kind, message, waited = value
        assert kind == "RuntimeError", value
        assert "rank 1" in message and expect in message, message
        assert waited < timeout_s + 5
    if mode == "exit":
        assert outcomes[1] == (False, None)
    if mode == "bad_arg":
        assert outcomes[1][1][0] == "ValueError"


# ---- argument validation ----------------------------------------------------------------------

class TestValidation:
    @pytest.fixture(scope="class")
    def setup(self):
        buf = dg.get_symm_buffer_for_mega_moe(None, 4, 8, 2, 256, 128)
        w = tm.make_weights(4, 256, 128, 0, 1)
        inp = tm.make_rank_inputs(8, 256, 4, 2, 0)
        return buf, w, inp

    def expect(self, exc, pattern, fn, y):
        before = y.clone()
        with pytest.raises(exc, match=pattern):
            fn()
        assert torch.equal(y.view(torch.int16), before.view(torch.int16)), "output written on error"

    def test_bad_arguments(self, setup):
        buf, w, inp = setup
        tm.fill_buffer(buf, inp)
        y = torch.full((8, 256), 7.0, dtype=torch.bfloat16)
        (w1, s1), (w2, s2) = w.l1, w.l2
        cases = [
            (TypeError, "^y", lambda: dg.fp8_fp4_mega_moe(y.float(), w.l1, w.l2, buf)),
            (ValueError, "^y", lambda: dg.fp8_fp4_mega_moe(torch.zeros(400, 256, dtype=torch.bfloat16), w.l1, w.l2,
                                                          buf)),
            (ValueError, "^y", lambda: dg.fp8_fp4_mega_moe(y.t(), w.l1, w.l2, buf)),
            (ValueError, "^l1_weights", lambda: dg.fp8_fp4_mega_moe(y, (w1[:, :64], s1), w.l2, buf)),
            (TypeError, "^l2_weights", lambda: dg.fp8_fp4_mega_moe(y, w.l1, (w2.float(), s2), buf)),
            # e4m3 weights (the transform's form for the NPU kernels) are refused by the host.
            (ValueError, "^l1_weights.*NPU kernels only",
             lambda: dg.fp8_fp4_mega_moe(y, (torch.zeros(4, 256, 256, dtype=torch.float8_e4m3fn), s1), w.l2, buf)),
            (ValueError, "^l2_weights", lambda: dg.fp8_fp4_mega_moe(y, w.l1, (w2, s2[:, :, :0]), buf)),
            (TypeError, "^l1_weights", lambda: dg.fp8_fp4_mega_moe(y, w1, w.l2, buf)),
            (ValueError, "^recipe", lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf, recipe=(1, 1, 128))),
            (ValueError, "^activation_clamp", lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf, activation_clamp=-1.0)),
            (ValueError, "^activation_clamp",
             lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf, activation_clamp=float("nan"))),
            (ValueError, "^activation", lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf, activation="gelu")),
            (TypeError, "^cumulative_local_expert_recv_stats",
             lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf, torch.zeros(4, dtype=torch.int64))),
            (ValueError, "^cumulative_local_expert_recv_stats",
             lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf, torch.zeros(3, dtype=torch.int32))),
            (TypeError, "^sym_buffer", lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, object())),
            (ValueError, "^sym_buffer", lambda: dg.bf16_mega_moe(y, w1, w2, buf)),
            (ValueError, "^y", lambda: dg.fp8_fp4_mega_moe(buf.buffer[8192:8192 + 8 * 256 * 2].view(torch.bfloat16)
                                                          .view(8, 256), w.l1, w.l2, buf)),
        ]
        for exc, pattern, fn in cases:
            self.expect(exc, pattern, fn, y)

    def test_bad_expert_ids_raise_on_every_rank(self, setup):
        buf, w, inp = setup
        tm.fill_buffer(buf, inp)
        buf.topk_idx[2, 1] = 4
        y = torch.full((8, 256), 7.0, dtype=torch.bfloat16)
        self.expect(ValueError, r"^topk_idx: rank 0 token 2 slot 1: expert id 4", lambda: dg.fp8_fp4_mega_moe(
            y, w.l1, w.l2, buf), y)
        buf.topk_idx[2, 1] = -2
        self.expect(ValueError, r"^topk_idx", lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf), y)

    def test_duplicate_experts_beyond_the_ring_are_refused(self, setup):
        _, w, _ = setup
        buf = dg.mega.SymmBuffer(None, 4, 384, 2, 256, 128, num_ring_tokens=384)
        inp = tm.make_rank_inputs(300, 256, 4, 2, 0)
        inp.topk_idx[:] = 0  # both slots of every token name expert 0: 600 rows for a 384-row ring
        tm.fill_buffer(buf, inp)
        y = torch.full((300, 256), 7.0, dtype=torch.bfloat16)
        self.expect(ValueError, r"^topk_idx: local expert 0 of rank 0 receives 600 rows",
                    lambda: dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf), y)
        # Within the ring, a token may list an expert twice: both slots are computed and summed.
        inp = tm.make_rank_inputs(150, 256, 4, 2, 0)
        inp.topk_idx[:, 1] = inp.topk_idx[:, 0]
        tm.fill_buffer(buf, inp)
        y = torch.empty(150, 256, dtype=torch.bfloat16)
        dg.fp8_fp4_mega_moe(y, w.l1, w.l2, buf)
        assert torch.equal(y, tm.unfused_mega_moe(inp, w, 4)[0])
