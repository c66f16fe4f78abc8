"""Runtime knobs: AI cores, host ISA, checked mode, build information."""
from . import _C


def set_num_ai_cores(num):
    """Use `num` AI cores (host: worker threads) for later kernels; 0 means all of them."""
    if not isinstance(num, int) or isinstance(num, bool):
        raise TypeError(f"num: expected an int, got {type(num).__name__}")
    _C.set_num_ai_cores(num)


def get_num_ai_cores():
    """Number of AI cores kernels use."""
    return _C.get_num_ai_cores()


# Upstream DeepGEMM names.
set_num_sms = set_num_ai_cores
get_num_sms = get_num_ai_cores


def set_host_isa(isa):
    """Force the host micro-kernel ISA ('amx', 'avx512bf16', 'avx2' or 'scalar'); None restores the default."""
    if isa is None:
        _C.reset_host_isa()
    else:
        _C.set_host_isa(isa)


def set_checked_mode(on):
    """Turn the tile machine's checked mode (capacity, alignment, event protocol) on or off."""
    if not isinstance(on, bool):
        raise TypeError(f"on: expected a bool, got {type(on).__name__}")
    _C.set_checked_mode(on)


def is_checked_mode():
    """True when the host tile machine checks capacity, alignment, event order and stage ownership
    (DGA_CHECKED=1 or set_checked_mode(True))."""
    return _C.checked_mode()


def set_backend(name):
    """Where CPU tensors run: 'host' (the host backend, the default) or 'npu-model' (the NPU kernels on
    the instruction model; entry points without an NPU kernel raise NotImplementedError). DGA_BACKEND
    sets the default."""
    global _backend
    if not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {type(name).__name__}")
    _C.set_backend(name)
    _backend = name


def get_backend():
    """'host' or 'npu-model' (see set_backend)."""
    return _backend


# A Python copy of the library's choice, so that torch.compile traces on_npu_kernels without a graph break.
_backend = _C.get_backend()


def on_npu_kernels(t):
    """True when a call on tensor `t` runs the NPU kernels: an npu tensor, or any tensor under npu-model."""
    return t.device.type == "npu" or _backend == "npu-model"


def info():
    """Build and machine information: version, backends, CPU features, host ISA, AI cores."""
    return dict(_C.info())
