"""Bad inputs raise TypeError / ValueError / RuntimeError naming the argument, and D stays untouched."""
import re

import pytest
import torch

import deepgemm_ascend as dg

M, N, K = 32, 48, 64


def operands():
    return torch.randn(M, K).bfloat16(), torch.randn(N, K).bfloat16(), torch.full((M, N), 7.0)


def expect(exc, arg, fn, *outputs):
    snapshots = [o.clone() for o in outputs]
    with pytest.raises(exc) as info:
        fn()
    assert re.search(rf"\b{arg}\b", str(info.value)), f"message does not name '{arg}': {info.value}"
    for o, s in zip(outputs, snapshots):
        assert torch.equal(o, s), "output written despite the error"


def test_wrong_dtypes():
    a, b, d = operands()
    expect(TypeError, "a", lambda: dg.bf16_gemm_nt(a.float(), b, d), d)
    expect(TypeError, "b", lambda: dg.bf16_gemm_nt(a, b.half(), d), d)
    d_int = torch.zeros(M, N, dtype=torch.int32)
    expect(TypeError, "d", lambda: dg.bf16_gemm_nt(a, b, d_int), d_int)
    expect(TypeError, "a", lambda: dg.bf16_gemm_nt(a.double(), b, d), d)  # float64 is not supported at all
    expect(TypeError, "c", lambda: dg.bf16_gemm_nt(a, b, d, torch.zeros(M, N, dtype=torch.bfloat16)), d)


def test_not_a_tensor():
    a, b, d = operands()
    expect(TypeError, "a", lambda: dg.bf16_gemm_nt(a.tolist(), b, d), d)
    expect(TypeError, "d", lambda: dg.bf16_gemm_nt(a, b, None), )


def test_mismatched_k_and_shapes():
    a, b, d = operands()
    expect(ValueError, "b", lambda: dg.bf16_gemm_nt(a, b[:, :K - 16], d), d)
    expect(ValueError, "b", lambda: dg.bf16_gemm_nn(a, b, d), d)           # nn wants B [K, N]
    expect(ValueError, "d", lambda: dg.bf16_gemm_nt(a, b, d[:, :N - 1]), d)
    expect(ValueError, "c", lambda: dg.bf16_gemm_nt(a, b, d, torch.zeros(M, N - 1)), d)


def test_wrong_rank():
    a, b, d = operands()
    expect(ValueError, "a", lambda: dg.bf16_gemm_nt(a[None], b, d), d)
    expect(ValueError, "b", lambda: dg.bf16_gemm_nt(a, b.flatten(), d), d)
    d3 = d[None].clone()
    expect(ValueError, "d", lambda: dg.bf16_gemm_nt(a, b, d3), d3)


def test_d_last_dimension_not_contiguous():
    a, b, _ = operands()
    d_t = torch.full((N, M), 7.0).T          # [M, N] with strides (1, M)
    expect(ValueError, "d", lambda: dg.bf16_gemm_nt(a, b, d_t), d_t)
    d_step = torch.full((M, 2 * N), 7.0)[:, ::2]
    expect(ValueError, "d", lambda: dg.bf16_gemm_nt(a, b, d_step), d_step)


def test_d_with_overlapping_rows():
    a, b, _ = operands()
    base = torch.full((M + N,), 7.0)
    d = base.as_strided((M, N), (1, 1))       # stride(-1) == 1 but rows overlap
    expect(ValueError, "d", lambda: dg.bf16_gemm_nt(a, b, d), base)


def test_outputs_must_not_alias_inputs():
    storage = torch.zeros(M * K + M * N * 2, dtype=torch.bfloat16)
    a = storage[: M * K].view(M, K).normal_()
    d = storage[M * K // 2: M * K // 2 + M * N].view(M, N)   # overlaps a
    b = torch.randn(N, K).bfloat16()
    expect(ValueError, "d", lambda: dg.bf16_gemm_nt(a, b, d), storage)


def test_c_partially_overlapping_d():
    a, b, _ = operands()
    big = torch.full((M + 1, N), 7.0)
    d, c = big[1:], big[:-1]
    expect(ValueError, "c", lambda: dg.bf16_gemm_nt(a, b, d, c), big)


def test_unsupported_and_mixed_devices():
    a, b, d = operands()
    expect(ValueError, "b", lambda: dg.bf16_gemm_nt(a, b.to("meta"), d), d)
    expect(ValueError, "d", lambda: dg.bf16_gemm_nt(a, b, torch.empty(M, N, device="meta")), d)


def test_error_messages_are_specific():
    a, b, d = operands()
    with pytest.raises(TypeError, match=r"a: expected dtype bfloat16, got float32"):
        dg.bf16_gemm_nt(a.float(), b, d)
    with pytest.raises(ValueError, match=r"b: K mismatch"):
        dg.bf16_gemm_nt(a, b[:, :16], d)
    with pytest.raises(ValueError, match=r"d: last dimension must be contiguous"):
        dg.bf16_gemm_nt(a, b, torch.empty(N, M).T)
