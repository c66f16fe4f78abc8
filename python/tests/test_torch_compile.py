"""torch.library integration: every kernel is a custom op with mutation annotations and a fake
implementation (opcheck), and torch.compile(fullgraph=True) traces the public API without graph breaks."""
import pytest
import torch

import deepgemm_ascend as dg

ops = torch.ops.deepgemm_ascend
# torch's schema test multiplies tensors to detect mutation, which FP8 dtypes do not support: ops with
# FP8 / FP4 tensors get the other checks plus the byte-level mutation check below.
WITHOUT_SCHEMA = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


def fp8(*shape, scale=10.0):
    return (torch.randn(*shape) * scale).to(torch.float8_e4m3fn)


def bytes_of(t):
    return t.contiguous().view(torch.uint8).clone() if t.dtype != torch.bool else t.clone()


def only_declared_outputs_change(op, args, mutated):
    """Runs op; every tensor argument not named in `mutated` (by position) must be byte-identical."""
    before = {i: bytes_of(a) for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
    op(*args)
    for i, snap in before.items():
        if i not in mutated:
            assert torch.equal(bytes_of(args[i]), snap), f"argument {i} was written"
    return True


def cases():
    a, b = torch.randn(64, 128).bfloat16(), torch.randn(32, 128).bfloat16()
    grouped_b = torch.randn(2, 32, 128).bfloat16()
    ids = torch.cat([torch.zeros(128), torch.ones(128)]).int()
    q = fp8(8, 8, 64)
    kv = fp8(40, 64)
    ks = torch.zeros(8, dtype=torch.int32)
    ke = torch.full((8,), 40, dtype=torch.int32)
    h = torch.randn(16, 256).bfloat16()
    return {
        "bf16_gemm": (ops.bf16_gemm.default, ("nt", a, b, torch.empty(64, 32), None, False), None),
        "bf16_gemm_acc": (ops.bf16_gemm.default, ("nt", a, b, torch.randn(64, 32), None, True), None),
        "fp8_fp4_gemm": (ops.fp8_fp4_gemm.default, ("nt", fp8(64, 256), torch.rand(64, 2), fp8(32, 256),
                                                     torch.rand(1, 2), torch.empty(64, 32), None, False, 1, 128, 128,
                                                     128), {5}),
        "m_grouped_gemm_contiguous": (ops.m_grouped_gemm_contiguous.default,
                                      ("nt", torch.randn(256, 128).bfloat16(), None, grouped_b, None,
                                       torch.empty(256, 32, dtype=torch.bfloat16), ids, False, True, 1, 128, 1, 128),
                                      None),
        "m_grouped_gemm_masked": (ops.m_grouped_gemm_masked.default,
                                  (torch.randn(2, 64, 128).bfloat16(), None, grouped_b, None,
                                   torch.zeros(2, 64, 32, dtype=torch.bfloat16), torch.tensor([10, 64]).int(), 64,
                                   1, 128, 1, 128), None),
        "k_grouped_gemm": (ops.k_grouped_gemm.default,
                           (torch.randn(256, 16).bfloat16(), None, torch.randn(256, 24).bfloat16(), None,
                            torch.randn(2, 16, 24), [128, 128], None, True, 128, None, None), None),
        "tf32_hc_prenorm_gemm": (ops.tf32_hc_prenorm_gemm.default,
                                 (torch.randn(32, 128).bfloat16(), torch.randn(8, 128), torch.empty(32, 8),
                                  torch.empty(32), None), None),
        "einsum": (ops.einsum.default, ("bmk,bnk->mn", torch.randn(3, 16, 64).bfloat16(),
                                        torch.randn(3, 24, 64).bfloat16(), torch.randn(16, 24), None, True), None),
        "fp8_fp4_mqa_logits": (ops.fp8_fp4_mqa_logits.default,
                               (q, None, kv, torch.rand(40), torch.randn(8, 8), ks, ke, torch.empty(8, 40), True,
                                False), {7}),
        "to_fractal": (ops.to_fractal.default, ("nz", a, torch.empty(8, 64, 16, dtype=torch.bfloat16), 16), None),
        "from_fractal": (ops.from_fractal.default, ("nz", torch.randn(8, 64, 16).bfloat16(),
                                                    torch.empty(64, 128, dtype=torch.bfloat16), 16), None),
        "mega_moe_swiglu": (ops.mega_moe_swiglu.default,
                            (h, torch.randn(16), torch.empty(16, 128, dtype=torch.float8_e4m3fn),
                             torch.empty(16, 1, dtype=torch.int32), -1.0, True, False), {2, 3}),
    }


@pytest.mark.parametrize("name", sorted(cases()))
def test_opcheck(name):
    op, args, fp8_mutated = cases()[name]
    if fp8_mutated is None:
        torch.library.opcheck(op, args)
    else:
        torch.library.opcheck(op, args, test_utils=WITHOUT_SCHEMA)
        assert only_declared_outputs_change(op, args, fp8_mutated)


def test_every_kernel_has_an_op():
    registered = {name for name in dir(ops) if not name.startswith("_")}
    expected = {"bf16_gemm", "fp8_fp4_gemm", "m_grouped_gemm_contiguous", "m_grouped_gemm_masked", "k_grouped_gemm",
                "k_grouped_fp8_gemm_nt", "tf32_hc_prenorm_gemm", "einsum", "fp8_einsum", "fp8_fp4_mqa_logits",
                "fp8_fp4_paged_mqa_logits", "to_fractal", "from_fractal", "mega_moe", "mega_moe_swiglu"}
    assert expected <= registered, expected - registered


def model(x, w, w8, sfw, grouped_w, ids, kv, weights):
    d = torch.empty(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    dg.bf16_gemm_nt(x, w, d)
    h = torch.relu(d.float())
    xq = x.float().to(torch.float8_e4m3fn)
    d2 = torch.empty(x.shape[0], w8.shape[0])
    dg.fp8_gemm_nt((xq, torch.ones(x.shape[0], x.shape[1] // 128)), (w8, sfw), d2)
    d3 = torch.empty(x.shape[0], grouped_w.shape[1], dtype=torch.bfloat16)
    dg.m_grouped_bf16_gemm_nt_contiguous(x, grouped_w, d3, ids)
    q = xq[:32].reshape(8, 8, 128)
    ks = torch.zeros(8, dtype=torch.int32)
    ke = torch.full((8,), kv.shape[0], dtype=torch.int32)
    logits = dg.fp8_mqa_logits(q, (kv, torch.ones(kv.shape[0])), weights, ks, ke)
    return h, d2, d3, logits


def test_compile_fullgraph_matches_eager():
    torch._dynamo.reset()
    args = (torch.randn(256, 256).bfloat16(), torch.randn(64, 256).bfloat16(), fp8(128, 256), torch.ones(1, 2),
            torch.randn(2, 96, 256).bfloat16(), torch.cat([torch.zeros(128), torch.ones(128)]).int(), fp8(48, 128),
            torch.randn(8, 8))
    eager = model(*args)
    compiled = torch.compile(model, fullgraph=True)(*args)
    for e, c in zip(eager, compiled):
        assert torch.equal(e, c)


def test_fake_tensors_take_the_op_path_and_eager_calls_skip_the_dispatcher():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a, b = torch.empty(64, 128, dtype=torch.bfloat16), torch.empty(32, 128, dtype=torch.bfloat16)
        d = torch.empty(64, 32)
        dg.bf16_gemm_nt(a, b, d)  # shape propagation only: the kernel never sees fake memory
    a, b = torch.randn(64, 128).bfloat16(), torch.randn(32, 128).bfloat16()
    d = torch.empty(64, 32)
    dg.bf16_gemm_nt(a, b, d)
    assert dg.testing.calc_diff(d, a.double() @ b.double().T) < 1e-5
