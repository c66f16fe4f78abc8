"""torch tensors -> the plain descriptors the C++ extension takes (no copies, strides honoured)."""
import torch

_DTYPE_NAMES = {
    torch.bfloat16: "bfloat16",
    torch.float16: "float16",
    torch.float32: "float32",
    torch.float8_e4m3fn: "float8_e4m3fn",
    torch.float8_e5m2: "float8_e5m2",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
}
for _name in ("float8_e8m0fnu", "float4_e2m1fn_x2"):
    if hasattr(torch, _name):
        _DTYPE_NAMES[getattr(torch, _name)] = _name


def desc(t, arg):
    """Descriptor of tensor `t`, passed to the extension as argument `arg`."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{arg}: expected a torch.Tensor, got {type(t).__name__}")
    name = _DTYPE_NAMES.get(t.dtype)
    if name is None:
        raise TypeError(f"{arg}: unsupported dtype {t.dtype}")
    if t.device.type not in ("cpu", "npu"):
        raise ValueError(f"{arg}: tensors on '{t.device}' are not supported (use cpu or npu)")
    offset = t.storage_offset()
    if t.numel() == 0:  # torch gives an empty view a data pointer of 0 whatever its offset: nothing is read
        return (0, 0, name, tuple(t.shape), tuple(t.stride()), t.device.type, t.device.index or 0)
    base = t.data_ptr() - offset * t.element_size()
    return (base, offset, name, tuple(t.shape), tuple(t.stride()), t.device.type, t.device.index or 0)


def npu_stream(device):
    """The aclrtStream handle of torch_npu's current stream on `device` (torch.npu exists only with
    torch_npu installed)."""
    npu = getattr(torch, "npu", None)
    if npu is None:
        raise RuntimeError(f"{device}: NPU tensors need torch_npu")
    stream = npu.current_stream(device)
    handle = getattr(stream, "npu_stream", None)
    return int(handle) if handle is not None else 0


def optional_desc(t, arg):
    return None if t is None else desc(t, arg)
