"""Fractal layouts of the Ascend cube, for pre-formatting weights.

A fractal is 16 rows x 32 bytes (C0 = 16 bf16/fp16 values, 32 8-bit values or 64 4-bit values).

* Nz of an [R, C] matrix: fractals ordered column-major, values inside a fractal row-major. The
  result has shape [ceil(C / C0), align(R, 16), C0] (storage units; 32 bytes for 4-bit).
* Zn of an [R, C] matrix: fractals ordered row-major, values inside a fractal column-major; Zn of X
  equals Nz of X.T. The result has shape [ceil(R / C0), align(C, 16), C0].

Padding is zero. A leading group dimension ([G, R, C]) is kept. 4-bit values are packed two per
byte along the last dimension (low nibble first): pass torch.float4_e2m1fn_x2 tensors, or int8 /
uint8 tensors with element_bits=4.
"""
import torch

from . import _ops

_C0_BYTES = 32
_FRACTAL_ROWS = 16


def _bits(t, element_bits):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"t: expected a torch.Tensor, got {type(t).__name__}")
    if element_bits is not None:
        if element_bits not in (4, 8, 16):
            raise ValueError(f"element_bits: must be 4, 8 or 16, got {element_bits}")
        return element_bits
    if getattr(torch, "float4_e2m1fn_x2", None) == t.dtype:
        return 4
    return t.element_size() * 8


def _ceil_div(a, b):
    return (a + b - 1) // b


def _fractal_shape(t, rows, cols, bits, zn):
    c0 = 256 // bits
    units = _C0_BYTES // t.element_size()
    major, minor = (cols, rows) if zn else (rows, cols)  # Zn of X is Nz of X.T
    lead = tuple(t.shape[:-2]) if t.dim() == 3 else ()
    return lead + (_ceil_div(minor, c0), _ceil_div(major, _FRACTAL_ROWS) * _FRACTAL_ROWS, units)


def _to(kind, t, element_bits):
    bits = _bits(t, element_bits)
    if t.dim() not in (2, 3):
        raise ValueError(f"t: expected a 2-D or 3-D tensor, got {t.dim()}-D")
    rows, cols = t.shape[-2], t.shape[-1] * (2 if bits == 4 else 1)
    out = torch.empty(_fractal_shape(t, rows, cols, bits, kind == "zn"), dtype=t.dtype, device=t.device)
    _ops.check_tensors(t=t, out=out)
    _ops.to_fractal(kind, t, out, bits)
    return out


def _from(kind, t, rows, cols, element_bits):
    bits = _bits(t, element_bits)
    if t.dim() not in (3, 4):
        raise ValueError(f"t: expected a 3-D (or grouped 4-D) fractal tensor, got {t.dim()}-D")
    if rows < 0 or cols < 0:
        raise ValueError(f"rows, cols: must be non-negative, got {rows}, {cols}")
    if bits == 4 and cols % 2:
        raise ValueError(f"cols: 4-bit values are packed in pairs, so cols must be even, got {cols}")
    stored_cols = cols // 2 if bits == 4 else cols
    lead = tuple(t.shape[:1]) if t.dim() == 4 else ()
    out = torch.empty(lead + (rows, stored_cols), dtype=t.dtype, device=t.device)
    _ops.check_tensors(t=t, out=out)
    _ops.from_fractal(kind, t, out, bits)
    return out


def to_nz(t, element_bits=None):
    """ND [.., R, C] -> Nz fractals [.., ceil(C/C0), align(R,16), C0]. Raises TypeError/ValueError on bad input."""
    return _to("nz", t, element_bits)


def from_nz(t, rows, cols, element_bits=None):
    """Nz fractals -> ND [.., rows, cols] (cols counts values; 4-bit output is packed [.., rows, cols/2])."""
    return _from("nz", t, rows, cols, element_bits)


def to_zn(t, element_bits=None):
    """ND [.., R, C] -> Zn fractals [.., ceil(R/C0), align(C,16), C0]."""
    return _to("zn", t, element_bits)


def from_zn(t, rows, cols, element_bits=None):
    """Zn fractals -> ND [.., rows, cols]."""
    return _from("zn", t, rows, cols, element_bits)
