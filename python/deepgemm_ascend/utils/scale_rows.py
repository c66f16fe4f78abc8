"""The rows of a grouped GEMM's scale factors that an output depends on.

A masked layout defines D only in the rows below ``masked_m[g]`` of group g, a contiguous layout only in the
rows whose group id is >= 0, a psum layout only in the rows inside a group. The scales of the other rows (padding
that engines allocate with ``torch.empty``) are never validated and never reach a kernel as anything but 0 when
they are converted: whatever their bytes, they cannot make a call fail or change a valid row.
"""
from typing import NamedTuple

import torch

from .. import _C
from .._tensor import desc

_KINDS = ("psum", "ids", "masked")


class ScaleRows(NamedTuple):
    """kind "psum": ``layout`` is the int32 [G] end offsets of an M-grouped psum layout; "ids": the int32 [M]
    per-row group ids (-1: padding) of a contiguous layout; "masked": the int32 [G] ``masked_m`` of a masked
    layout. ``arg`` names ``layout`` in errors."""
    kind: str
    layout: torch.Tensor
    arg: str


def require_ue8m0_values(sf, name, rows=None, gran_mn=1):
    """The UE8M0 value check (exact powers of two, no NaN byte) of scales in host memory, in C++ (one pass), over
    the rows `rows` selects (all without it); scale rows of `gran_mn` > 1 rows each are all checked. Scales in NPU
    memory are not read (that would stall the stream): their exponent bits are taken as they are."""
    if sf.device.type != "cpu":
        return
    if rows is None or gran_mn != 1:
        _C.require_ue8m0_values(desc(sf, name), name, None)
        return
    if rows.kind not in _KINDS:
        raise ValueError(f"kind: expected one of {_KINDS}, got {rows.kind!r}")
    if not _fits(sf, rows):
        return  # the entry point reports the mismatched shapes or devices; nothing is read here
    _C.require_ue8m0_values(desc(sf, name), name, desc(rows.layout, rows.arg), rows.arg, rows.kind)


def _fits(sf, rows):
    """Whether `rows.layout` is a host int32 vector that describes the rows of `sf`."""
    t = rows.layout
    if not (isinstance(t, torch.Tensor) and t.dtype == torch.int32 and t.dim() == 1 and t.device.type == "cpu"
            and t.is_contiguous() and sf.dim() >= 2):
        return False
    if rows.kind == "ids":
        return t.numel() == sf.size(-2)
    if rows.kind == "masked":
        return sf.dim() == 3 and t.numel() == sf.size(0)
    return True


def _psum_mask(ends, rows):
    """Rows [align(end[g-1], alignment), end[g]) of every group of a psum layout, as a bool [rows] mask."""
    alignment = _C.get_mk_alignment_for_contiguous_layout()
    ends = ends.to(torch.int64)
    r = torch.arange(rows, dtype=torch.int64, device=ends.device)
    if ends.numel() == 0:
        return torch.zeros(rows, dtype=torch.bool, device=ends.device)
    starts = torch.cat([ends.new_zeros(1), ends[:-1]])
    starts = (starts + alignment - 1) // alignment * alignment
    g = torch.searchsorted(ends, r, right=True)  # the first group whose end lies beyond row r
    return (g < ends.numel()) & (r >= starts[g.clamp(max=ends.numel() - 1)])


def row_mask(rows, groups, mn, device):
    """A bool mask [G, MN] (``groups`` None: [MN]) on `device` of the rows `rows` selects; torch ops on the
    layout's device, no host sync. Shapes that do not match the scales raise ValueError naming the layout."""
    t = rows.layout
    if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != 1:
        raise TypeError(f"{rows.arg}: expected an int32 1-D tensor")
    if rows.kind == "psum":
        mask = _psum_mask(t, mn)
    elif rows.kind == "ids":
        if t.numel() != mn:
            raise ValueError(f"{rows.arg}: expected {mn} group ids (one per row), got {t.numel()}")
        mask = t >= 0
    elif rows.kind == "masked":
        if groups is None or t.numel() != groups:
            raise ValueError(f"{rows.arg}: expected {groups} row counts (one per group), got {t.numel()}")
        mask = torch.arange(mn, device=t.device)[None, :] < t.to(torch.int64)[:, None]
    else:
        raise ValueError(f"kind: expected one of {_KINDS}, got {rows.kind!r}")
    if groups is not None and mask.dim() == 1:
        mask = mask.expand(groups, mn)
    return mask.to(device)


def keep_rows(b, rows, groups):
    """Exponent bytes [G?, MN, SK] with the rows `rows` does not select set to 0 (`rows` None: unchanged)."""
    if rows is None:
        return b
    return b * row_mask(rows, groups, b.size(-2), b.device)[..., None]
