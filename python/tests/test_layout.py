"""Fractal layouts: bit-exact against an independent index formula, round trips, and errors."""
import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend import layout

FP4 = getattr(torch, "float4_e2m1fn_x2", None)


def align(x, y):
    return (x + y - 1) // y * y


def ref_nz(codes, bits):
    """Nz of integer codes [R, C]: element (r, c) -> [c // C0, r, c % C0], zero padded."""
    c0 = 256 // bits
    rows, cols = codes.shape
    padded = torch.zeros(align(rows, 16), align(cols, c0), dtype=codes.dtype)
    padded[:rows, :cols] = codes
    out = torch.zeros(padded.shape[1] // c0, padded.shape[0], c0, dtype=codes.dtype)
    for r in range(rows):
        for c in range(cols):
            out[c // c0, r, c % c0] = codes[r, c]
    assert torch.equal(out, padded.view(padded.shape[0], -1, c0).permute(1, 0, 2))
    return out


def ref_zn(codes, bits):
    return ref_nz(codes.T.contiguous(), bits)


def unpack4(t):
    """Packed bytes [.., R, C/2] -> codes [.., R, C] (low nibble first)."""
    u = t.view(torch.uint8).to(torch.int16)
    return torch.stack([u & 0xF, u >> 4], dim=-1).flatten(-2)


def pack4(codes):
    c = codes.to(torch.uint8)
    return c[..., 0::2] | (c[..., 1::2] << 4)


def random_tensor(shape, kind):
    """A tensor of the given storage shape with random bits of the kind's width."""
    if kind == "bf16":
        return torch.randn(shape).bfloat16()
    if kind == "fp16":
        return torch.randn(shape).half()
    if kind == "int16":
        return torch.randint(-32768, 32767, shape, dtype=torch.int16)
    if kind == "e4m3":
        return torch.randint(0, 256, shape, dtype=torch.uint8).view(torch.float8_e4m3fn)
    if kind == "e5m2":
        return torch.randint(0, 256, shape, dtype=torch.uint8).view(torch.float8_e5m2)
    if kind == "int8":
        return torch.randint(-128, 127, shape, dtype=torch.int8)
    if kind == "fp4x2":
        return torch.randint(0, 256, shape, dtype=torch.uint8).view(FP4)
    if kind == "int8x4":
        return torch.randint(-128, 127, shape, dtype=torch.int8)
    raise AssertionError(kind)


KINDS = {"bf16": 16, "fp16": 16, "int16": 16, "e4m3": 8, "e5m2": 8, "int8": 8, "fp4x2": 4, "int8x4": 4}
if FP4 is None:
    KINDS.pop("fp4x2")
SHAPES = [(1, 1), (15, 17), (16, 16), (33, 65), (100, 300), (64, 128)]


def codes_of(t, bits):
    if bits == 4:
        return unpack4(t)
    return t.view(torch.int16 if bits == 16 else torch.uint8).to(torch.int16)


def element_bits(kind):
    return 4 if kind == "int8x4" else None


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("fractal", ["nz", "zn"])
def test_bit_exact_and_round_trip(kind, shape, fractal):
    bits = KINDS[kind]
    rows, cols = shape
    if bits == 4 and cols % 2:
        cols += 1
    storage_cols = cols // 2 if bits == 4 else cols
    t = random_tensor((rows, storage_cols), kind)
    to = layout.to_nz if fractal == "nz" else layout.to_zn
    back = layout.from_nz if fractal == "nz" else layout.from_zn
    out = to(t, element_bits=element_bits(kind))
    expected = (ref_nz if fractal == "nz" else ref_zn)(codes_of(t, bits), bits)
    assert torch.equal(codes_of(out, bits), expected)
    restored = back(out, rows, cols, element_bits=element_bits(kind))
    assert restored.dtype == t.dtype and restored.shape == t.shape
    assert torch.equal(restored.view(torch.uint8) if t.element_size() == 1 else restored.view(torch.int16),
                       t.view(torch.uint8) if t.element_size() == 1 else t.view(torch.int16))


def test_padding_is_zero_and_shape_is_documented():
    t = torch.randn(17, 20).bfloat16()
    out = layout.to_nz(t)
    assert out.shape == (2, 32, 16)
    assert (out[:, 17:, :].view(torch.int16) == 0).all()   # row tail
    assert (out[1, :, 4:].view(torch.int16) == 0).all()    # column tail (20 = 16 + 4)


def test_non_contiguous_sources():
    base = torch.randn(40, 90).bfloat16()
    for t in [base.T, base[3:30, 5:70], base[::2, ::3]]:
        expected = ref_nz(t.contiguous().view(torch.int16), 16)
        assert torch.equal(layout.to_nz(t).view(torch.int16), expected)
        assert torch.equal(layout.to_zn(t).view(torch.int16), ref_zn(t.contiguous().view(torch.int16), 16))


def test_grouped_weights():
    w = torch.randint(0, 256, (3, 20, 70), dtype=torch.uint8).view(torch.float8_e4m3fn)
    out = layout.to_nz(w)
    assert out.shape == (3, 3, 32, 32)
    for g in range(3):
        assert torch.equal(out[g].view(torch.uint8).to(torch.int16), ref_nz(w[g].view(torch.uint8).to(torch.int16), 8))
    assert torch.equal(layout.from_nz(out, 20, 70).view(torch.uint8), w.view(torch.uint8))


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"^t:"):
        layout.to_nz([[1, 2]])
    with pytest.raises(ValueError, match=r"element_bits"):
        layout.to_nz(torch.zeros(4, 4, dtype=torch.int8), element_bits=5)
    with pytest.raises(TypeError, match=r"^t:"):
        layout.to_nz(torch.zeros(4, 4, dtype=torch.int8), element_bits=16)
    with pytest.raises(ValueError, match=r"^t:"):
        layout.to_nz(torch.zeros(4, dtype=torch.bfloat16))
    out = layout.to_nz(torch.randn(20, 20).bfloat16())
    with pytest.raises(ValueError, match=r"^t:"):
        layout.from_nz(out, 40, 20)          # shape does not match the fractal tensor
    with pytest.raises(ValueError, match=r"cols"):
        layout.from_nz(layout.to_nz(torch.zeros(4, 4, dtype=torch.uint8), element_bits=4), 4, 7, element_bits=4)
    with pytest.raises(ValueError, match=r"^t:"):
        layout.from_nz(out.transpose(0, 1), 20, 20)   # not contiguous
