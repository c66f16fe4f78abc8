"""Quantisation helpers with upstream DeepGEMM semantics, plus dequantisation for tests.

Formats:

* FP8 is ``torch.float8_e4m3fn`` (largest finite value 448).
* FP4 is E2M1: magnitude codes 0..7 mean {0, 0.5, 1, 1.5, 2, 3, 4, 6}, bit 3 is the sign. Two codes
  share a byte along the last dimension: element 2i in the low nibble, element 2i+1 in the high
  nibble. Packed results are ``torch.int8`` (as upstream); ``torch.uint8`` and
  ``torch.float4_e2m1fn_x2`` are accepted wherever a packed tensor is an input.
* UE8M0 is an exponent byte ``e`` meaning ``2**(e - 127)`` (byte 0 is 2**-127, byte 255 is NaN).
  Upstream packs four K-adjacent bytes into one int32 (byte t of word j = scale 4j+t); the Ascend
  layout packs two into one int16 (see ``deepgemm_ascend.utils.layout``).

Scales of a quantised tensor ``q`` relate to the original ``x`` as ``x ~= q * sf``, with ``sf``
broadcast over ``gran_mn`` rows and ``gran_k`` columns (the last, partial block uses the last scale).
Errors: TypeError for wrong types/dtypes, ValueError for bad shapes or values; messages start with
the argument name.
"""
import torch
import torch.nn.functional as F

FP8_MAX = 448.0
FP4_MAX = 6.0
AMAX_MIN = 1e-4
FP4_THRESHOLDS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)
FP4_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)

_FP8 = torch.float8_e4m3fn
_E8M0 = getattr(torch, "float8_e8m0fnu", None)
_FP4X2 = getattr(torch, "float4_e2m1fn_x2", None)
_INPUT_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_PACKED_FP4 = tuple(d for d in (torch.int8, torch.uint8, _FP4X2) if d is not None)
_BYTE_SCALES = tuple(d for d in (torch.uint8, _E8M0) if d is not None)


def ceil_div(x, y):
    """ceil(x / y) for integers; y must be positive."""
    if not y > 0:
        raise ValueError(f"y: must be positive, got {y}")
    return (x + y - 1) // y


def align(x, y):
    """The smallest multiple of y that is >= x."""
    return ceil_div(x, y) * y


# ----------------------------------------------------------------------------------------------
# argument checks and bit helpers (shared with layout.py)

def _check_tensor(t, name, dims=None):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if dims is not None and t.dim() not in dims:
        want = " or ".join(f"{d}-D" for d in dims)
        raise ValueError(f"{name}: expected a {want} tensor, got shape {list(t.shape)}")


def _check_int(v, name, minimum=0):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name}: expected an int, got {type(v).__name__}")
    if v < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {v}")
    return v


def _check_bool(v, name):
    if not isinstance(v, bool):
        raise TypeError(f"{name}: expected a bool, got {type(v).__name__}")
    return v


def _check_input(x, name, dims):
    _check_tensor(x, name, dims)
    if x.dtype not in _INPUT_FLOATS:
        raise TypeError(f"{name}: expected float16, bfloat16, float32 or float64, got {x.dtype}")


def _wrap(words, bits):
    """Non-negative int64 words < 2**bits -> the signed int16/int32 with the same bits."""
    signed = torch.where(words >= 2 ** (bits - 1), words - 2 ** bits, words)
    return signed.to(torch.int16 if bits == 16 else torch.int32)


def _fp32_bits(x):
    """The raw IEEE bits of x (converted to fp32) as non-negative int64."""
    return x.to(torch.float32).view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def _bits_to_fp32(bits):
    return _wrap(bits, 32).view(torch.float32)


def _bytes_to_fp32(b):
    """UE8M0 exponent bytes (int64) -> fp32 2**(b-127); 0 -> 2**-127 (a subnormal), 255 -> NaN."""
    bits = torch.where(b == 0, torch.full_like(b, 0x00400000), b << 23)
    return _bits_to_fp32(torch.where(b == 255, torch.full_like(b, 0x7FC00000), bits))


def _pack_bytes(b, n, fill=0):
    """Bytes (int64) [..., S] -> words [..., ceil(S/n)]: byte t of word j is b[n*j + t] (tail = fill)."""
    s = b.size(-1)
    if align(s, n) != s:
        b = F.pad(b, (0, align(s, n) - s), value=fill)
    b = b.reshape(*b.shape[:-1], b.size(-1) // n, n)
    words = sum(b[..., t] << (8 * t) for t in range(n))
    return _wrap(words, 8 * n)


def _unpack_bytes(w, n, count):
    """Words [..., P] of n bytes each -> bytes (int64) [..., count] (count <= n*P)."""
    w = w.to(torch.int64)
    b = torch.stack([(w >> (8 * t)) & 0xFF for t in range(n)], dim=-1)
    return b.flatten(-2)[..., :count]


def _scaled(amax, fmt_max, use_ue8m0):
    sf = amax.clamp(min=AMAX_MIN) / fmt_max
    return ceil_to_ue8m0(sf) if use_ue8m0 else sf


# ----------------------------------------------------------------------------------------------
# UE8M0

def ceil_to_ue8m0(x):
    """The smallest power of two >= x, elementwise, as fp32 (x is read as fp32; meant for x > 0).

    The biased exponent is ``e + (mantissa != 0)`` clamped to [1, 254], so 0 and subnormals give
    2**-126, huge values saturate at 2**127, and the sign of x is ignored.
    """
    _check_tensor(x, "x")
    if not x.is_floating_point():
        raise TypeError(f"x: expected a floating-point tensor, got {x.dtype}")
    bits = _fp32_bits(x)
    e = ((bits >> 23) & 0xFF) + ((bits & 0x7FFFFF) != 0).to(torch.int64)
    return _bits_to_fp32(e.clamp(1, 254) << 23)


def _exponent_bytes(sf, name):
    """Exponent bytes (int64) of fp32/bf16/fp16 scales (mantissa dropped) or of uint8/e8m0 bytes."""
    if sf.dtype in _BYTE_SCALES:
        return sf.view(torch.uint8).to(torch.int64)
    if sf.dtype in (torch.float32, torch.bfloat16, torch.float16):
        return (_fp32_bits(sf) >> 23) & 0xFF
    raise TypeError(f"{name}: expected float32 (or uint8/float8_e8m0fnu exponents), got {sf.dtype}")


def pack_ue8m0_to_int(sf):
    """Packs scales [..., SK] into int32 [..., ceil(SK/4)], upstream style.

    Byte t (little-endian) of word j is the biased exponent ``(bits >> 23) & 0xFF`` of sf[..., 4j+t];
    missing tail scales are 0 bytes. The mantissa is dropped, so pass powers of two (see
    ``ceil_to_ue8m0``). sf may also be uint8 / float8_e8m0fnu exponent bytes.
    """
    _check_tensor(sf, "sf")
    if sf.dim() == 0:
        raise ValueError("sf: expected at least one dimension, got a scalar")
    return _pack_bytes(_exponent_bytes(sf, "sf"), 4)


def unpack_ue8m0_from_int(packed, sk=None):
    """Inverse of ``pack_ue8m0_to_int``: int32 [..., P] -> fp32 scales [..., sk] (sk defaults to 4P).

    Each byte b becomes 2**(b - 127) (so 0 -> 2**-127). Raises ValueError unless ceil(sk/4) == P.
    """
    _check_tensor(packed, "packed")
    if packed.dtype != torch.int32:
        raise TypeError(f"packed: expected int32, got {packed.dtype}")
    if packed.dim() == 0:
        raise ValueError("packed: expected at least one dimension, got a scalar")
    p = packed.size(-1)
    sk = 4 * p if sk is None else _check_int(sk, "sk")
    if ceil_div(sk, 4) != p:
        raise ValueError(f"sk: {sk} scales need {ceil_div(sk, 4)} int32 words, packed has {p}")
    return _bytes_to_fp32(_unpack_bytes(packed, 4, sk))


# ----------------------------------------------------------------------------------------------
# FP8 quantisers: q = e4m3(x * (1 / sf)) in fp32, sf = max(amax, 1e-4) / 448 (optionally ceil'd to
# a power of two)

def _check_quant_args(x, dims, use_ue8m0, gran_k):
    _check_input(x, "x", dims)
    _check_bool(use_ue8m0, "use_ue8m0")
    return _check_int(gran_k, "gran_k", 1)


def per_token_cast_to_fp8(x, use_ue8m0, gran_k=128, use_packed_ue8m0=False):
    """Per (row, gran_k-column block) FP8 quantisation of x [m, n] (float16/bfloat16/float32/float64).

    Returns ``(q, sf)``: q float8_e4m3fn [m, n]; sf fp32 [m, ceil(n/gran_k)], or with
    ``use_packed_ue8m0=True`` (requires ``use_ue8m0=True``) int32 [m, ceil(ceil(n/gran_k)/4)]
    packed as in ``pack_ue8m0_to_int``. n is zero-padded to a multiple of gran_k for the amax.
    """
    gran_k = _check_quant_args(x, (2,), use_ue8m0, gran_k)
    if _check_bool(use_packed_ue8m0, "use_packed_ue8m0") and not use_ue8m0:
        raise ValueError("use_packed_ue8m0: packed UE8M0 scales require use_ue8m0=True")
    m, n = x.shape
    nb = ceil_div(n, gran_k)
    xb = F.pad(x.float(), (0, nb * gran_k - n)).reshape(m, nb, gran_k)
    sf = _scaled(xb.abs().amax(dim=-1), FP8_MAX, use_ue8m0)
    q = (xb * (1.0 / sf).unsqueeze(-1)).to(_FP8).reshape(m, nb * gran_k)[:, :n].contiguous()
    return q, (pack_ue8m0_to_int(sf) if use_packed_ue8m0 else sf)


def per_channel_cast_to_fp8(x, use_ue8m0, gran_k=128):
    """Per (gran_k-row block, column) FP8 quantisation of x [m, n]; requires m % gran_k == 0.

    Returns ``(q float8_e4m3fn [m, n], sf fp32 [m / gran_k, n])``.
    """
    gran_k = _check_quant_args(x, (2,), use_ue8m0, gran_k)
    m, n = x.shape
    if m % gran_k:
        raise ValueError(f"x: per-channel casting needs the row count to be a multiple of gran_k={gran_k}, "
                         f"got shape {list(x.shape)}")
    xb = x.float().reshape(m // gran_k, gran_k, n)
    sf = _scaled(xb.abs().amax(dim=1), FP8_MAX, use_ue8m0)
    return (xb * (1.0 / sf).unsqueeze(1)).to(_FP8).reshape(m, n), sf


def per_block_cast_to_fp8(x, use_ue8m0, gran_k=128):
    """Per gran_k x gran_k tile FP8 quantisation of x [m, n] (both dims zero-padded to gran_k).

    Returns ``(q float8_e4m3fn [m, n], sf fp32 [ceil(m/gran_k), ceil(n/gran_k)])``.
    """
    gran_k = _check_quant_args(x, (2,), use_ue8m0, gran_k)
    m, n = x.shape
    mb, nb = ceil_div(m, gran_k), ceil_div(n, gran_k)
    xb = F.pad(x.float(), (0, nb * gran_k - n, 0, mb * gran_k - m)).reshape(mb, gran_k, nb, gran_k)
    sf = _scaled(xb.abs().amax(dim=(1, 3)), FP8_MAX, use_ue8m0)
    q = (xb * (1.0 / sf)[:, None, :, None]).to(_FP8).reshape(mb * gran_k, nb * gran_k)[:m, :n]
    return q.contiguous(), sf


def per_custom_dims_cast_to_fp8(x, dims, use_ue8m0):
    """FP8 quantisation with one scale per index of the dimensions in ``dims``.

    The amax (clamped >= 1e-4) is taken over every dimension *not* in dims; sf = amax / 448
    (optionally ceil'd to a power of two). Returns ``(q, sf.squeeze())``: q float8_e4m3fn of x's
    shape, sf fp32 (as upstream every size-1 dimension is squeezed: kv [n, d] with dims=(0,) gives
    sf [n]).
    """
    _check_input(x, "x", None)
    _check_bool(use_ue8m0, "use_ue8m0")
    if isinstance(dims, int) and not isinstance(dims, bool):
        dims = (dims,)
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"dims: expected a tuple of ints, got {type(dims).__name__}")
    keep = set()
    for d in dims:
        _check_int(d, "dims", -x.dim())
        if d >= x.dim():
            raise ValueError(f"dims: dimension {d} out of range for a {x.dim()}-D tensor")
        keep.add(d % x.dim())
    reduced = tuple(i for i in range(x.dim()) if i not in keep)
    xf = x.float()
    amax = xf.abs().amax(dim=reduced, keepdim=True) if reduced else xf.abs()
    sf = _scaled(amax, FP8_MAX, use_ue8m0)
    return (xf * (1.0 / sf)).to(_FP8), sf.squeeze()


# ----------------------------------------------------------------------------------------------
# FP4

def _fp4_encode(v):
    """fp32 values (already divided by the scale) -> E2M1 codes (int64), ties toward zero."""
    mag = v.abs()
    code = sum((mag > t).to(torch.int64) for t in FP4_THRESHOLDS)
    return code | (((v < 0) & (code != 0)).to(torch.int64) << 3)


def _fp4_decode(codes):
    lut = torch.tensor(FP4_VALUES + tuple(-v for v in FP4_VALUES), dtype=torch.float32, device=codes.device)
    return lut[codes]


def _pack_nibbles(codes):
    """Codes [..., n] (n even) -> int8 [..., n/2] (element 2i low nibble)."""
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).to(torch.uint8).view(torch.int8)


def _check_packed_fp4(packed, name):
    if packed.dtype not in _PACKED_FP4:
        raise TypeError(f"{name}: expected packed FP4 as int8, uint8 or float4_e2m1fn_x2, got {packed.dtype}")


def _unpack_nibbles(packed, name):
    """Packed int8/uint8/float4_e2m1fn_x2 [..., c] -> codes (int64) [..., 2c]."""
    _check_packed_fp4(packed, name)
    b = packed.view(torch.uint8).to(torch.int64)
    return torch.stack([b & 0xF, b >> 4], dim=-1).flatten(-2)


def per_token_cast_to_fp4(x, use_ue8m0, gran_k=128, use_packed_ue8m0=False):
    """Per (row, gran_k-column block) FP4 (E2M1) quantisation of x [m, n] with n even.

    sf = max(amax, 1e-4) / 6 (optionally ceil'd to a power of two); codes as described in the module
    docstring. Returns ``(packed int8 [m, n/2], sf)`` with sf fp32 [m, ceil(n/gran_k)] or, with
    ``use_packed_ue8m0=True`` (requires ``use_ue8m0=True``), int32 [m, ceil(ceil(n/gran_k)/4)] whose
    tail is padded with 1.0 (exponent byte 127) as upstream does.
    """
    gran_k = _check_quant_args(x, (2,), use_ue8m0, gran_k)
    if _check_bool(use_packed_ue8m0, "use_packed_ue8m0") and not use_ue8m0:
        raise ValueError("use_packed_ue8m0: packed UE8M0 scales require use_ue8m0=True")
    m, n = x.shape
    if n % 2:
        raise ValueError(f"x: FP4 packs two values per byte, so the last dimension must be even, got {n}")
    nb = ceil_div(n, gran_k)
    xb = F.pad(x.float(), (0, nb * gran_k - n)).reshape(m, nb, gran_k)
    sf = _scaled(xb.abs().amax(dim=-1), FP4_MAX, use_ue8m0)
    codes = _fp4_encode(xb * (1.0 / sf).unsqueeze(-1)).reshape(m, nb * gran_k)[:, :n]
    if use_packed_ue8m0:
        sf = _pack_bytes(_exponent_bytes(sf, "sf"), 4, fill=127)
    return _pack_nibbles(codes), sf


def transpose_packed_fp4(packed):
    """Packed FP4 [m, n/2] -> packed FP4 [n, m/2] holding the transposed values (m must be even).

    Accepts int8, uint8 or float4_e2m1fn_x2; the result has the input's dtype.
    """
    _check_tensor(packed, "packed", (2,))
    codes = _unpack_nibbles(packed, "packed")
    if codes.size(0) % 2:
        raise ValueError(f"packed: transposing needs an even number of rows, got {codes.size(0)}")
    return _pack_nibbles(codes.T.contiguous()).view(packed.dtype)


def cast_back_from_fp4(packed, sf, gran_k=128, use_packed_ue8m0=False):
    """Dequantises packed FP4 [m, n/2] with per-(row, gran_k block) scales into fp32 [m, n].

    sf is fp32 [m, ceil(n/gran_k)], or int32 [m, ceil(ceil(n/gran_k)/4)] when use_packed_ue8m0=True.
    """
    _check_tensor(packed, "packed", (2,))
    _check_tensor(sf, "sf", (2,))
    want = torch.int32 if _check_bool(use_packed_ue8m0, "use_packed_ue8m0") else torch.float32
    if sf.dtype != want:
        raise TypeError(f"sf: expected {want} with use_packed_ue8m0={use_packed_ue8m0}, got {sf.dtype}")
    return dequant_fp4(packed, sf, 1, gran_k)


# ----------------------------------------------------------------------------------------------
# dequantisation (test helpers)

def _scales_fp32(sf, lead, mn, k, gran_mn, gran_k):
    """Any supported scale tensor -> fp32 [*lead, ceil(mn/gran_mn), ceil(k/gran_k)] (values only)."""
    _check_tensor(sf, "sf")
    rows, sk = ceil_div(mn, gran_mn), ceil_div(k, gran_k)
    cols = {torch.float32: sk, torch.int16: ceil_div(sk, 2), torch.int32: ceil_div(sk, 4)}
    cols.update({d: sk for d in _BYTE_SCALES})
    if sf.dtype not in cols:
        raise TypeError(f"sf: expected float32, int16 (Ascend pairs), int32 (packed UE8M0), uint8 or "
                        f"float8_e8m0fnu scales, got {sf.dtype}")
    expected = list(lead) + [rows, cols[sf.dtype]]
    if list(sf.shape) != expected:
        raise ValueError(f"sf: expected shape {expected} for {sf.dtype} scales of a {list(lead) + [mn, k]} "
                         f"operand with gran_mn={gran_mn}, gran_k={gran_k}, got {list(sf.shape)}")
    if sf.dtype == torch.float32:
        return sf
    if sf.dtype in _BYTE_SCALES:
        return _bytes_to_fp32(_exponent_bytes(sf, "sf"))
    return _bytes_to_fp32(_unpack_bytes(sf, 2 if sf.dtype == torch.int16 else 4, sk))


def _apply_scales(values, sf, gran_mn, gran_k):
    _check_int(gran_mn, "gran_mn", 1)
    _check_int(gran_k, "gran_k", 1)
    *lead, mn, k = values.shape
    s = _scales_fp32(sf, lead, mn, k, gran_mn, gran_k)
    s = s.repeat_interleave(gran_mn, dim=-2)[..., :mn, :].repeat_interleave(gran_k, dim=-1)[..., :k]
    return values * s


def dequant_fp8(q, sf, gran_mn, gran_k):
    """``q * sf`` in fp32 for q [..., MN, K] (an FP8 or other floating dtype).

    sf covers gran_mn rows x gran_k columns per entry: fp32 [..., ceil(MN/gran_mn), ceil(K/gran_k)],
    or UE8M0 as uint8/float8_e8m0fnu [..., R, SK], upstream int32 [..., R, ceil(SK/4)] or the Ascend
    int16 pairs [..., R, ceil(SK/2)] (any strides). Partial last blocks use the last scale.
    """
    _check_tensor(q, "q", (2, 3))
    if not q.is_floating_point():
        raise TypeError(f"q: expected an FP8 (or other floating) tensor, got {q.dtype}")
    return _apply_scales(q.float(), sf, gran_mn, gran_k)


def dequant_fp4(packed, sf, gran_mn, gran_k):
    """Dequantises packed FP4 [..., MN, K/2] (int8/uint8/float4_e2m1fn_x2) into fp32 [..., MN, K].

    sf as in ``dequant_fp8`` (fp32, uint8/e8m0, upstream int32 or Ascend int16 layout).
    """
    _check_tensor(packed, "packed", (2, 3))
    return _apply_scales(_fp4_decode(_unpack_nibbles(packed, "packed")), sf, gran_mn, gran_k)
