"""Scale-factor layouts consumed by the Ascend 950 FP8/FP4 GEMMs.

Ascend UE8M0 layout ("ue8m0x2", what ``is_ascend_sf_layout`` checks): for scales of logical shape
[G?, MN, SK] (SK = ceil(K / gran_k)) the result is an int16 tensor of logical shape
[G?, MN, ceil(SK / 2)]. Element (g, r, j) holds the exponent byte of scale (g, r, 2j) in its low
byte and of scale (g, r, 2j+1) in its high byte (0 when 2j+1 == SK). It is stored MN-major:
``stride(-2) == 1``, ``stride(-1) == align(MN, 16)`` and, for 3-D, ``stride(-3) == stride(-1) *
size(-1)``, so every packed column starts on a 32-byte boundary (the GM->L1 ND2NZ DMA of the 950
moves 32-byte units). Rows MN..align(MN, 16) of each column are padding, filled with 0.

FP32 scales kept in FP32 (recipes with gran_k == 128, or ``disable_ue8m0_cast=True``) use the
MN-major layout with ``stride(-1) == align(MN, 8)`` (32 bytes of fp32) for per-token scales, and
stay contiguous for 128 x 128 block scales.

A tensor "has" a layout when its strides match exactly, its data pointer is 32-byte aligned and its
storage holds the padding of every column. Errors: TypeError for wrong types/dtypes, ValueError for
bad shapes, values or recipes; messages start with the argument name.
"""
import torch

from .math import (_BYTE_SCALES, _check_bool, _check_int, _check_tensor, _fp32_bits, _pack_bytes,
                   _unpack_bytes, _wrap, align, ceil_div)
from .scale_rows import ScaleRows, keep_rows, require_ue8m0_values

DMA_BYTES = 32
ASCEND_SF_MN_ALIGN = DMA_BYTES // 2  # int16 entries per 32 bytes
FP32_SF_MN_ALIGN = DMA_BYTES // 4


def get_tma_aligned_size(x, element_size):
    """``align(x, 32 // element_size)``.

    Ascend meaning: the 950's DMA moves 32-byte units, so the MN extent of an MN-major scale tensor
    is padded to 32 bytes (8 fp32/int32, 16 int16 values). Upstream aligns to 16 bytes (TMA) instead.
    element_size must be a positive divisor of 32 (ValueError otherwise).
    """
    _check_int(x, "x")
    _check_int(element_size, "element_size", 1)
    if DMA_BYTES % element_size:
        raise ValueError(f"element_size: must divide {DMA_BYTES}, got {element_size}")
    return align(x, DMA_BYTES // element_size)


def _mn_major_strides(shape, mn_align):
    mn, cols = shape[-2], shape[-1]
    a = align(mn, mn_align)
    return (cols * a, 1, a) if len(shape) == 3 else (1, a)


def _has_mn_major_layout(t, mn_align):
    if t.dim() not in (2, 3) or tuple(t.stride()) != _mn_major_strides(t.shape, mn_align):
        return False
    if t.numel() == 0:
        return True
    groups = t.size(0) if t.dim() == 3 else 1
    extent = groups * t.size(-1) * align(t.size(-2), mn_align)  # elements including column padding
    if (t.storage_offset() + extent) * t.element_size() > t.untyped_storage().nbytes():
        return False
    return t.data_ptr() % DMA_BYTES == 0


def _to_mn_major(values, mn_align, dtype):
    """A new zero-padded MN-major tensor (dtype) holding values [G?, MN, C]."""
    *lead, mn, cols = values.shape
    full = tuple(lead) + (align(mn, mn_align), cols)
    out = torch.empty_strided(full, _mn_major_strides(full, mn_align), dtype=dtype, device=values.device)
    out.zero_()
    out = out[..., :mn, :]
    out.copy_(values)
    return out


def is_ascend_sf_layout(t):
    """True iff t is an int16 [MN, C] or [G, MN, C] tensor in the Ascend UE8M0-pair layout.

    Checks dtype, strides (``(1, align(MN, 16))`` or ``(C * align(MN, 16), 1, align(MN, 16))``), a
    32-byte aligned data pointer and storage covering the padded extent. Never raises.
    """
    return isinstance(t, torch.Tensor) and t.dtype == torch.int16 and _has_mn_major_layout(t, ASCEND_SF_MN_ALIGN)


def _ascend_strides_text(shape):
    return f"strides {_mn_major_strides(shape, ASCEND_SF_MN_ALIGN)} (MN-major, column stride align(MN, 16))"


def _ue8m0_bytes(sf, sk, name, rows=None):
    """UE8M0 exponent bytes (int64) [..., MN, SK] of fp32 powers of two, uint8/e8m0 or int32 words; host values
    are checked over the rows `rows` selects (scale_rows.ScaleRows; all rows without it)."""
    if sf.dtype == torch.int32:
        words = sf.size(-1)
        sk = 4 * words if sk is None else _check_int(sk, "sk")
        if ceil_div(sk, 4) != words:
            raise ValueError(f"sk: {sk} scales need {ceil_div(sk, 4)} int32 words, {name} has {words}")
    elif sf.dtype != torch.float32 and sf.dtype not in _BYTE_SCALES:
        raise TypeError(f"{name}: expected float32 powers of two, uint8 / float8_e8m0fnu exponents or "
                        f"upstream-packed int32 UE8M0, got {sf.dtype}")
    require_ue8m0_values(sf, name, rows)
    if sf.dtype == torch.float32:
        return (_fp32_bits(sf) >> 23) & 0xFF
    if sf.dtype == torch.int32:
        return _unpack_bytes(sf, 4, sk)
    return sf.view(torch.uint8).to(torch.int64)


def _ascend_pack(b):
    """Exponent bytes [G?, MN, SK] -> the Ascend int16 layout [G?, MN, ceil(SK/2)]."""
    return _to_mn_major(_pack_bytes(b, 2), ASCEND_SF_MN_ALIGN, torch.int16)


def _ue8m0_regrouped(sf, k, gran_k, new_gran_k):
    """Ascend int16 UE8M0 pairs of one scale per gran_k K values -> one per new_gran_k (dividing gran_k),
    each scale repeated: the same scaling, exactly (a new tensor in the Ascend layout)."""
    b = _unpack_bytes(sf, 2, ceil_div(k, gran_k))
    b = b.repeat_interleave(gran_k // new_gran_k, dim=-1)[..., :ceil_div(k, new_gran_k)]
    return _ascend_pack(b)


def k_grouped_mx_pairs(sf, ks, gran_k, name="sf"):
    """K-grouped float32 scales [sum_g ceil(k_g / gran_k), MN] (group g's rows after group g-1's), powers of
    two, as the NPU's MX cube takes them: UE8M0 pairs by global K, int16 [ceil(sum K / 64), MN] (MN
    contiguous), whose row p holds the scales of K [64p, 64p + 32) (low byte) and [64p + 32, 64p + 64) (high
    byte). A new tensor on sf's device, built without a host sync."""
    mx_k = 32
    if not isinstance(sf, torch.Tensor) or sf.dtype != torch.float32 or sf.dim() != 2:
        raise TypeError(f"{name}: expected float32 [sum ceil(k_g / gran_k), MN] scales")
    ks = [int(kg) for kg in ks]
    total_rows, total_blocks = sum(ceil_div(kg, gran_k) for kg in ks), sum(ceil_div(kg, mx_k) for kg in ks)
    if total_rows != sf.size(0):
        raise ValueError(f"{name}: expected {total_rows} rows (sum of ceil(k_g / {gran_k})), got {sf.size(0)}")
    ks = torch.tensor(ks, dtype=torch.int64)  # host memory: the index below is built on the CPU
    rows, blocks = (ks + gran_k - 1) // gran_k, (ks + mx_k - 1) // mx_k
    # Scale row of every 32-value K block: its group's first row plus the block's index within the group.
    first_block = torch.cumsum(blocks, 0) - blocks
    index = torch.arange(total_blocks, dtype=torch.int64) - torch.repeat_interleave(first_block, blocks,
                                                                                      output_size=total_blocks)
    first_row = torch.repeat_interleave(torch.cumsum(rows, 0) - rows, blocks, output_size=total_blocks)
    index = first_row + index * mx_k // gran_k
    b = _ue8m0_bytes(sf, None, name)[index.to(sf.device)]
    if b.size(0) % 2:
        b = torch.cat([b, torch.zeros_like(b[:1])])
    return _wrap(b[0::2] | (b[1::2] << 8), 16).contiguous()


def get_mn_major_packed_ue8m0x2_tensor(sf, sk=None):
    """UE8M0 scales [G?, MN, SK] -> the Ascend int16 pair layout [G?, MN, ceil(SK/2)] (new tensor).

    sf may be
      * float32: every value must be an exact power of two (sign and mantissa bits zero) or +0
        (encoded as byte 0, as upstream); anything else raises ValueError "... not a power of two",
        never rounds silently;
      * uint8 or float8_e8m0fnu exponent bytes (byte 255 = NaN raises ValueError);
      * int32 packed upstream style [G?, MN, ceil(SK/4)]; SK is ``sk`` or 4 * size(-1).
    ``sk``, if given for a non-int32 input, must equal size(-1).
    """
    _check_tensor(sf, "sf", (2, 3))
    if sk is not None and sf.dtype != torch.int32 and _check_int(sk, "sk") != sf.size(-1):
        raise ValueError(f"sk: must equal sf.size(-1) = {sf.size(-1)} for {sf.dtype} scales, got {sk}")
    return _ascend_pack(_ue8m0_bytes(sf, sk, "sf"))


def _words_pack(b):
    """Exponent bytes [G?, MN, SK] -> upstream's packed layout: int32 [G?, MN, ceil(SK/4)] (byte t of word j
    holds scale 4j + t, 0 past SK), MN-major with the column stride get_tma_aligned_size(MN, 4)."""
    return _to_mn_major(_pack_bytes(b, 4), FP32_SF_MN_ALIGN, torch.int32)


def _psum_rows(sf, psum_layout):
    """The psum layout's rows of 2-D contiguous scales (gap rows are neither validated nor kept: packed as 0)."""
    if sf.dim() != 2 or not sf.is_contiguous():
        raise ValueError("sf: psum_layout needs contiguous 2-D scales")
    return ScaleRows("psum", psum_layout, "psum_layout")


def get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=None):
    """UE8M0 scales [G?, MN, SK] -> upstream's packed layout: int32 [G?, MN, ceil(SK/4)], byte t of word j
    the exponent of scale 4j + t (0 past SK), MN-major: ``stride(-2) == 1``, ``stride(-1) ==
    get_tma_aligned_size(MN, 4)`` (32 bytes here, 16 upstream) and for 3-D ``stride(0) == stride(-1) *
    size(-1)``; padding 0. The host GEMMs read it in place; the NPU kernels take the Ascend pairs of
    ``get_mn_major_packed_ue8m0x2_tensor`` (a call converts it).

    sf: float32 powers of two or +0 (also uint8 / float8_e8m0fnu exponents or int32 words); host values are
    checked (ValueError naming the first bad one); NPU values are not read, their exponent bits are taken.
    With ``psum_layout`` (int32 [G] group end offsets of an M-grouped psum layout; 2-D contiguous sf) rows
    outside every group are packed as 0 and not checked.
    """
    _check_tensor(sf, "sf", (2, 3))
    rows = None if psum_layout is None else _psum_rows(sf, psum_layout)
    return _words_pack(keep_rows(_ue8m0_bytes(sf, None, "sf", rows), rows, None))


def _k_group_rows(grouped_layout, ks_cpu, gran_k, k_alignment, use_psum_layout, device):
    """(scale rows, packed rows) of every K group as int64 tensors on `device`, and the packed rows to allocate."""
    if use_psum_layout:  # the groups' K from the end offsets, on their device: no host sync
        ends = grouped_layout.to(device=device, dtype=torch.int64)
        starts = torch.cat([ends.new_zeros(1), ends[:-1]])
        starts = (starts + k_alignment - 1) // k_alignment * k_alignment
        ks = (ends - starts).clamp(min=0)
    else:
        ks = torch.tensor(ks_cpu, dtype=torch.int64, device=device)
    return (ks + gran_k - 1) // gran_k, (ks + 4 * gran_k - 1) // (4 * gran_k)


def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k=128, k_alignment=None,
                                                           use_psum_layout=False):
    """K-grouped float32 UE8M0 scales [sum_g ceil(k_g / gran_k), MN] (group g's rows after group g-1's) ->
    upstream's packed layout per group: int32 [sum_g ceil(k_g / (4 gran_k)), MN], row-major, group g's
    words after group g-1's, byte t of word j of a group the exponent of its scale row 4j + t (0 past the
    group's rows).

    grouped_layout: int32 [G] (the K sizes, or with use_psum_layout the end offsets of the psum layout,
    group g's K being end[g] - align(end[g-1], k_alignment)); ks_cpu: the K sizes (a list, G entries), or
    with use_psum_layout None or [] (then as many rows are allocated as any layout needs,
    (rows + 3 G) / 4; the rows after the last group's are 0); given with the psum layout, they only size
    the result. gran_k 32 or 128; k_alignment a multiple of 32; MN a multiple of 4 (as upstream). Built by
    tensor ops on sf's device (no host sync); host values are checked as powers of two (ValueError).

    k_alignment is read only with use_psum_layout, which raises ValueError without it. The older upstream
    forms are accepted with their meaning: (sf, ks_tensor, ks, gran_k) (7f2a703 to 88965b0, no psum layout)
    is the call with the K sizes and use_psum_layout=False; (sf, ks_tensor, ks) (before 7f2a703) is that
    call with gran_k 128 (the default).
    """
    _check_tensor(sf, "sf", (2,))
    if sf.dtype != torch.float32:
        raise TypeError(f"sf: expected float32 scales, got {sf.dtype}")
    if not isinstance(grouped_layout, torch.Tensor) or grouped_layout.dtype != torch.int32 or grouped_layout.dim() != 1:
        raise TypeError("grouped_layout: expected an int32 [G] tensor")
    if gran_k not in (32, 128):
        raise ValueError(f"gran_k: must be 32 or 128, got {gran_k!r}")
    if k_alignment is not None and (not isinstance(k_alignment, int) or k_alignment <= 0 or k_alignment % 32):
        raise ValueError(f"k_alignment: must be a positive multiple of 32, got {k_alignment!r}")
    if _check_bool(use_psum_layout, "use_psum_layout") and k_alignment is None:
        raise ValueError("k_alignment: needed with use_psum_layout=True (group g's K is end[g] - align(end[g-1], "
                         "k_alignment)); pass k_alignment")
    groups, (rows, mn) = grouped_layout.numel(), sf.shape
    if mn % 4:
        raise ValueError(f"sf: MN (its second dimension) must be a multiple of 4, got {mn}")
    synced = ks_cpu is not None and len(ks_cpu) > 0
    if synced:
        if not all(isinstance(k, int) and k >= 0 for k in ks_cpu) or len(ks_cpu) != groups:
            raise ValueError(f"ks_cpu: expected {groups} non-negative ints (one per group), got {ks_cpu!r}")
        if not use_psum_layout and sum(ceil_div(k, gran_k) for k in ks_cpu) != rows:
            raise ValueError(f"sf: expected {sum(ceil_div(k, gran_k) for k in ks_cpu)} rows (sum of ceil(k / "
                             f"{gran_k})), got {rows}")
        packed = sum(ceil_div(k, 4 * gran_k) for k in ks_cpu)
    elif not use_psum_layout:
        raise ValueError("ks_cpu: the K sizes are needed without use_psum_layout")
    else:
        packed = (rows + 3 * groups) // 4
    if groups == 0 or packed == 0 or rows == 0:
        return torch.zeros(packed, mn, dtype=torch.int32, device=sf.device)
    exps = _ue8m0_bytes(sf, None, "sf")
    sf_rows, packed_rows = _k_group_rows(grouped_layout, ks_cpu, gran_k, k_alignment, use_psum_layout, sf.device)
    # Output row p: its group g, word j within the group; its four scale rows first_row[g] + 4j + t.
    p = torch.arange(packed, dtype=torch.int64, device=sf.device)
    packed_end = torch.cumsum(packed_rows, 0)
    g = torch.searchsorted(packed_end, p, right=True).clamp(max=groups - 1)
    j = p - (packed_end - packed_rows)[g]
    words = torch.zeros(packed, mn, dtype=torch.int64, device=sf.device)
    for t in range(4):  # the four bytes of a word (not a loop over scales)
        r = 4 * j + t
        valid = (p < packed_end[-1]) & (r < sf_rows[g])
        src = ((torch.cumsum(sf_rows, 0) - sf_rows)[g] + r).clamp(max=rows - 1)
        words |= torch.where(valid[:, None], exps[src], 0) << (8 * t)
    return _wrap(words, 32)


def get_mn_major_tma_aligned_tensor(sf):
    """fp32 scales [G?, MN, SK] -> the same values with ``stride(-2) == 1``, ``stride(-1) ==
    align(MN, 8)`` (32 bytes) and, for 3-D, ``stride(-3) == stride(-1) * SK``; padding is 0.

    Returns sf itself (no copy) when it already has exactly that layout. TypeError unless float32.
    """
    _check_tensor(sf, "sf", (2, 3))
    if sf.dtype != torch.float32:
        raise TypeError(f"sf: expected float32 scales, got {sf.dtype}")
    if _has_mn_major_layout(sf, FP32_SF_MN_ALIGN):
        return sf
    return _to_mn_major(sf, FP32_SF_MN_ALIGN, torch.float32)


def _parse_recipe(recipe, is_sfa):
    if not isinstance(recipe, (tuple, list)):
        raise TypeError(f"recipe: expected a tuple of ints, got {type(recipe).__name__}")
    for g in recipe:
        _check_int(g, "recipe", 1)
    if len(recipe) == 3:
        if not isinstance(is_sfa, bool):
            raise ValueError(f"is_sfa: a 3-tuple recipe needs is_sfa=True (SFA) or False (SFB), got {is_sfa!r}")
        return (recipe[0] if is_sfa else recipe[1]), recipe[2]
    if len(recipe) == 2:
        if is_sfa is not None:
            raise ValueError(f"is_sfa: must be None with a 2-tuple recipe (gran_mn, gran_k), got {is_sfa!r}")
        return recipe[0], recipe[1]
    raise ValueError(f"recipe: expected (gran_m, gran_n, gran_k) or (gran_mn, gran_k), got {tuple(recipe)}")


def _check_shape(sf, expected, what):
    if list(sf.shape) != list(expected):
        raise ValueError(f"sf: expected shape {list(expected)} for {what}, got {list(sf.shape)}")


def transform_sf_into_required_layout(sf, mn, k, recipe, num_groups=None, is_sfa=None,
                                      disable_ue8m0_cast=False, psum_layout=None, rows=None):
    """Brings scale factors into the layout the Ascend FP8/FP4 GEMMs consume.

    recipe: (gran_m, gran_n, gran_k) with is_sfa selecting gran_m (True) or gran_n (False), or
    (gran_mn, gran_k) with is_sfa None; gran_k must be 32 or 128. With SK = ceil(k / gran_k) and G =
    num_groups (sf is 2-D when num_groups is None, else 3-D with size(0) == num_groups):

    * int16 [G?, mn, ceil(SK/2)], gran_mn == 1: returned as is (the same object) when it has the
      Ascend layout (``is_ascend_sf_layout``), else ValueError naming the expected strides.
    * int32 [G?, mn, ceil(SK/4)] (upstream-packed UE8M0), gran_mn == 1: converted to the Ascend layout.
    * uint8 / float8_e8m0fnu [G?, mn, SK] (exponent bytes), gran_mn == 1: converted likewise.
    * fp32 [G?, ceil(mn/gran_mn), SK] with gran_k == 32 and not disable_ue8m0_cast (an MX recipe):
      rows broadcast r -> r // gran_mn (so the result has mn rows), then packed into the Ascend
      layout; values must be exact powers of two (or 0), else ValueError.
    * fp32, same shape, with gran_k == 128 or disable_ue8m0_cast=True (FP32 promotion in the kernel):
      gran_mn == 1 -> ``get_mn_major_tma_aligned_tensor(sf)``; gran_mn == 128 -> sf unchanged after
      checking it is contiguous (per group for 3-D); other gran_mn -> ValueError.

    Anything else raises: TypeError for other dtypes (e.g. float16), ValueError for shapes, recipes
    and non-power-of-two scales. ``psum_layout`` (int32 [G] end offsets of an M-grouped psum layout, 2-D
    contiguous sf) or ``rows`` (a ``scale_rows.ScaleRows``: the rows of a grouped layout whose outputs are
    defined) limit the UE8M0 forms to those rows: the others are packed as 0 and not validated.
    """
    if psum_layout is not None:
        if rows is not None:
            raise ValueError("psum_layout: give psum_layout or rows, not both")
        rows = _psum_rows(sf, psum_layout)
    _check_tensor(sf, "sf")
    _check_int(mn, "mn")
    _check_int(k, "k")
    gran_mn, gran_k = _parse_recipe(recipe, is_sfa)
    _check_bool(disable_ue8m0_cast, "disable_ue8m0_cast")
    if gran_k not in (32, 128):
        raise ValueError(f"recipe: gran_k must be 32 or 128, got {gran_k}")
    if num_groups is None:
        lead = []
        if sf.dim() != 2:
            raise ValueError(f"sf: expected a 2-D tensor without num_groups, got shape {list(sf.shape)}")
    else:
        lead = [_check_int(num_groups, "num_groups", 1)]
        if sf.dim() != 3 or sf.size(0) != num_groups:
            raise ValueError(f"num_groups: expected sf of shape [{num_groups}, ..], got {list(sf.shape)}")
    sk = ceil_div(k, gran_k)
    dims = f"mn={mn}, k={k}, gran_mn={gran_mn}, gran_k={gran_k}"
    if sf.dtype == torch.float32:
        _check_shape(sf, lead + [ceil_div(mn, gran_mn), sk], f"float32 scales ({dims})")
        if gran_k == 32 and not disable_ue8m0_cast:
            b = _ue8m0_bytes(sf, None, "sf", rows if gran_mn == 1 else None)
            if gran_mn > 1:
                b = b.repeat_interleave(gran_mn, dim=-2)[..., :mn, :]
            return _ascend_pack(keep_rows(b, rows, num_groups))
        if gran_mn == 1:
            return get_mn_major_tma_aligned_tensor(sf)
        if gran_mn != 128:
            raise ValueError(f"recipe: float32 scales kept in FP32 need gran_mn 1 or 128, got {gran_mn}")
        per_group = sf[0] if sf.dim() == 3 and sf.size(0) > 0 else sf
        if not per_group.is_contiguous():
            raise ValueError(f"sf: 128x{gran_k} block scales must be contiguous (per group), got strides "
                             f"{tuple(sf.stride())}")
        return sf
    int_cols = {torch.int16: ceil_div(sk, 2), torch.int32: ceil_div(sk, 4)}
    int_cols.update({d: sk for d in _BYTE_SCALES})
    if sf.dtype not in int_cols:
        raise TypeError(f"sf: unsupported dtype {sf.dtype}; expected float32, int16 (Ascend layout), "
                        "int32 (packed UE8M0), uint8 or float8_e8m0fnu")
    if gran_mn != 1:
        raise ValueError(f"recipe: {sf.dtype} UE8M0 scales need gran_mn == 1 (one row per scale), got {gran_mn}")
    expected = lead + [mn, int_cols[sf.dtype]]
    _check_shape(sf, expected, f"{sf.dtype} scales ({dims})")
    if sf.dtype == torch.int16:
        if not is_ascend_sf_layout(sf):
            raise ValueError(f"sf: int16 scales must be in the Ascend layout ({_ascend_strides_text(expected)}, "
                             f"32-byte aligned, padded storage), got strides {tuple(sf.stride())}")
        return sf
    return _ascend_pack(keep_rows(_ue8m0_bytes(sf, sk, "sf", rows), rows, num_groups))
