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


def set_block_size_multiple_of(new_value):
    """Every GEMM tile config chosen afterwards has block_m a multiple of m and block_n a multiple of n
    (new_value: an int for both, or (m, n); powers of two up to 256, 1 = no constraint). A GEMM that no
    tile config fits raises ValueError naming set_block_size_multiple_of."""
    if isinstance(new_value, bool) or not (isinstance(new_value, int) or (
            isinstance(new_value, (tuple, list)) and len(new_value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in new_value))):
        raise TypeError(f"new_value: expected an int or a (block_m, block_n) pair of ints, got {new_value!r}")
    m, n = (new_value, new_value) if isinstance(new_value, int) else tuple(new_value)
    _C.set_block_size_multiple_of(m, n)


_knobs = {"tc_util": 0, "pdl": False, "ignore_compile_dims": False}


def set_tc_util(new_tc_util):
    """Upstream's tensor-core utilisation target in percent (0 = 100). Validated (an int in [0, 100]) and
    kept; no Ascend kernel reads it (the 950's cube has no partial-utilisation mode)."""
    if isinstance(new_tc_util, bool) or not isinstance(new_tc_util, int) or not 0 <= new_tc_util <= 100:
        raise ValueError(f"new_tc_util: expected an int in [0, 100], got {new_tc_util!r}")
    _knobs["tc_util"] = new_tc_util


def get_tc_util():
    """The value set_tc_util kept, 100 for 0 (upstream's reading)."""
    return _knobs["tc_util"] or 100


def set_pdl(new_enable_pdl):
    """Upstream's programmatic dependent launch switch. Validated (a bool) and kept; Ascend launches on
    one stream are ordered by the stream and have no PDL, so it changes nothing."""
    if not isinstance(new_enable_pdl, bool):
        raise TypeError(f"new_enable_pdl: expected a bool, got {type(new_enable_pdl).__name__}")
    _knobs["pdl"] = new_enable_pdl


def get_pdl():
    """The value set_pdl kept (False by default)."""
    return _knobs["pdl"]


def set_ignore_compile_dims(new_value):
    """Upstream's switch to compile JIT kernels without the shape dimensions as constants. Validated (a
    bool) and kept; this package's JIT entries (DGA_JIT=1) are specialised by tile config only, never by
    shape, so it changes nothing."""
    if not isinstance(new_value, bool):
        raise TypeError(f"new_value: expected a bool, got {type(new_value).__name__}")
    _knobs["ignore_compile_dims"] = new_value


def set_host_isa(isa):
    """Force the host micro-kernel ISA ('amx', 'avx512bf16', 'avx512', 'avx2' or 'scalar'); None restores the default."""
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


def measure_host_peak(budget_s=0.2):
    """The host's measured peak: the active ISA's micro-kernel instruction on registers only, on every AI core
    at once, for about `budget_s` seconds; {'isa', 'cores', 'tflops', 'seconds'} (best of a few rounds)."""
    return dict(_C.measure_host_peak(float(budget_s)))
