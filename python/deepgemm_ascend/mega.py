"""Mega MoE: expert-parallel dispatch, FP8 x FP4 (or BF16) expert GEMMs, SwiGLU and combine in one
collective call per rank (upstream `deep_gemm.mega`).

Every rank owns one symmetric buffer of the same layout. On the host backend the buffers of the
ranks of a `torch.distributed` group live in shared memory mapped by every rank, so a rank reads
its peers' tokens and writes expert outputs straight into their combine slots; the process group
is used for the rendezvous only (gloo is enough). World size 1 needs no process group.

A rank that exits or stops calling makes its peers raise RuntimeError naming it within
DGA_COMM_TIMEOUT_S seconds (default 100); after such a failure the buffer must be recreated.
"""
import os
import socket
import uuid

import torch

from . import _C, _ops
from .utils.math import _check_int, align

_MMA_TYPES = ("fp8xfp4", "bf16xbf16")
_L1_INTERLEAVE = 8  # gate/up rows interleaved in chunks of 8 by transform_weights_for_mega_moe


def _check_choice(v, name, choices):
    if v not in choices:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, choices))}, got {v!r}")


class MegaMoeSlicer:
    """Turns a rank's int8 buffer into the named views of the Mega MoE layout."""

    def __init__(self, regions, num_experts_per_rank, num_max_tokens_per_rank, num_topk, hidden,
                 intermediate_hidden, num_ring_tokens, mma_type):
        self.regions = dict(regions)
        self.num_experts_per_rank = num_experts_per_rank
        self.n, self.topk, self.hidden, self.inter = num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden
        self.ring, self.mma_type = num_ring_tokens, mma_type

    def __call__(self, buffer):
        if not isinstance(buffer, torch.Tensor) or buffer.dtype != torch.int8 or buffer.dim() != 1:
            raise TypeError("buffer: expected a 1-D int8 tensor")
        if buffer.numel() < self.regions["num_bytes"]:
            raise ValueError(f"buffer: needs {self.regions['num_bytes']} bytes, got {buffer.numel()}")
        fp8 = self.mma_type == "fp8xfp4"
        tok = torch.float8_e4m3fn if fp8 else torch.bfloat16
        sf_rows = self.regions["sf_ring_rows"]

        def region(name, dtype, shape, strides=None):
            off, nbytes = self.regions[name]
            flat = buffer[off:off + nbytes].view(dtype)
            if strides is None:
                return flat.view(shape)
            return flat.as_strided(shape, strides)

        n, h, i, ring = self.n, self.hidden, self.inter, self.ring
        views = {
            "x": region("x", tok, (n, h)),
            "topk_idx": region("topk_idx", torch.int64, (n, self.topk)),
            "topk_weights": region("topk_weights", torch.float32, (n, self.topk)),
            "l1_acts": region("l1_acts", tok, (ring, h)),
            "l2_acts": region("l2_acts", tok, (ring, i)),
        }
        if fp8:
            views["x_sf"] = region("x_sf", torch.int32, (n, h // 128))
            views["l1_acts_sf"] = region("l1_acts_sf", torch.int32, (ring, h // 128), (1, sf_rows))
            views["l2_acts_sf"] = region("l2_acts_sf", torch.int32, (ring, i // 128), (1, sf_rows))
        else:
            views["x_sf"] = views["l1_acts_sf"] = views["l2_acts_sf"] = None
        return views


class _Handle:
    def __init__(self, buffer_ptrs):
        self.buffer_ptrs = list(buffer_ptrs)


def _shm_dir():
    return "/dev/shm" if os.path.isdir("/dev/shm") else None


_HOST_BYTES = 256  # hostnames are at most 255 bytes


def _bytes_tensor(data, size):
    """`data` zero-padded to `size` bytes, as a uint8 tensor (for tensor collectives)."""
    out = torch.zeros(size, dtype=torch.uint8)
    out[:len(data)] = torch.tensor(list(data[:size]), dtype=torch.uint8)
    return out


_IPC_KEY_BYTES = 65  # aclrtIpcMemGetExportKey's key length
_ERR_BYTES = 512


def _gather_outcome(group, world, fn):
    """Runs fn() on every rank; returns every rank's result (bytes of at most _IPC_KEY_BYTES) or raises
    RuntimeError naming the first rank whose fn raised, on every rank alike (no rank is left waiting)."""
    import torch.distributed as dist

    try:
        value, err = fn(), b""
    except Exception as e:  # noqa: BLE001 - reported to every rank below
        value, err = b"", f"{type(e).__name__}: {e}".encode()
    mine = torch.cat([_bytes_tensor(value, _IPC_KEY_BYTES), _bytes_tensor(err, _ERR_BYTES)])
    every = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(every, mine, group=group)
    text = [bytes(t.tolist()) for t in every]
    for r, t in enumerate(text):
        err = t[_IPC_KEY_BYTES:].rstrip(b"\0").decode(errors="replace")
        if err:
            raise RuntimeError(f"device: rank {r}: {err}")
    return [t[:_IPC_KEY_BYTES].rstrip(b"\0") for t in text]


def _share_npu_buffers(group, rank, world, buf, device_index, ipc=None):
    """Every rank's NPU buffer as an address in this process, through ACL's IPC memory (the ranks of one
    node): the ranks' process ids are exchanged, each rank exports its buffer to the others' ids and
    imports theirs (peer access enabled). Returns (addresses by rank, keys by rank). An ACL error on any
    rank raises RuntimeError on every rank (imports already made are closed)."""
    ipc = ipc or _C
    pids = _gather_outcome(group, world, lambda: str(ipc.npu_ipc_pid()).encode())
    others = [int(p) for r, p in enumerate(pids) if r != rank]
    nbytes = buf.numel() * buf.element_size()
    exported = []

    def export():
        exported.append(ipc.npu_ipc_export(device_index, buf.data_ptr(), nbytes, others))
        return exported[0].encode()

    try:
        keys = [k.decode() for k in _gather_outcome(group, world, export)]
    except RuntimeError:
        for k in exported:  # another rank failed: nothing imports this rank's key
            ipc.npu_ipc_close(k)
        raise
    ptrs = [buf.data_ptr()] * world
    imported = []

    def import_all():
        for r in range(world):
            if r != rank:
                ptrs[r] = ipc.npu_ipc_import(device_index, keys[r])
                imported.append(r)
        return b""

    try:
        _gather_outcome(group, world, import_all)
    except RuntimeError:
        _close_npu_buffers(group, rank, keys, imported, ipc)
        raise
    return ptrs, keys


def _close_npu_buffers(group, rank, keys, imported, ipc=None):
    """Closes this rank's imports of the keys of the ranks `imported`, then (after every rank has closed
    its imports: aclrtIpcMemClose's order) its own export."""
    import torch.distributed as dist

    ipc = ipc or _C
    for r in imported:
        ipc.npu_ipc_close(keys[r])
    dist.barrier(group=group)
    ipc.npu_ipc_close(keys[rank])


def _map_peer_buffers(group, rank, world, num_bytes):
    """Shared-memory buffers of every rank of `group`, mapped into this process (host backend)."""
    import torch.distributed as dist

    # Tensor collectives only: torch's object collectives pickle through numpy.
    hosts = [torch.empty(_HOST_BYTES, dtype=torch.uint8) for _ in range(world)]
    dist.all_gather(hosts, _bytes_tensor(socket.gethostname().encode(), _HOST_BYTES), group=group)
    names = {bytes(h.tolist()).rstrip(b"\0").decode(errors="replace") for h in hosts}
    if len(names) != 1:
        raise RuntimeError(f"group: the host backend needs every rank on one machine, got hosts {sorted(names)}")
    token = _bytes_tensor(uuid.uuid4().bytes if rank == 0 else b"", 16)
    dist.broadcast(token, src=dist.get_global_rank(group, 0) if group is not None else 0, group=group)
    token = [bytes(token.tolist()).hex()]
    folder = _shm_dir()
    if folder is None:
        import tempfile
        folder = tempfile.gettempdir()
    paths = [os.path.join(folder, f"deepgemm_ascend_mega_moe_{token[0]}_{r}") for r in range(world)]
    fd = os.open(paths[rank], os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, max(num_bytes, 1))  # a new file reads as zeros
    finally:
        os.close(fd)
    try:
        dist.barrier(group=group)
        mapped = [torch.from_file(p, shared=True, size=max(num_bytes, 1), dtype=torch.int8)[:num_bytes]
                  for p in paths]
        _C.mega_moe_register_process(mapped[rank].data_ptr())
        dist.barrier(group=group)
    finally:
        os.unlink(paths[rank])  # the mappings stay valid; nothing is left behind in shared memory
    return mapped


def _buffer_device(device):
    """torch.device of a buffer: cpu or npu (npu needs torch_npu)."""
    if device is None:
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:  # torch without torch_npu does not parse 'npu'
        if str(device).split(":")[0] != "npu":
            raise ValueError(f"device: expected cpu or npu, got {device!r}") from None
        raise RuntimeError(f"device: {device!r} needs torch_npu") from None
    if dev.type not in ("cpu", "npu"):
        raise ValueError(f"device: expected cpu or npu, got {dev}")
    return dev


class SymmBuffer:
    """The symmetric buffer of one rank (collective constructor over `group`).

    Attributes: buffer (this rank's int8 buffer), handle.buffer_ptrs (every rank's buffer in this
    process), the views x, x_sf, topk_idx, topk_weights, l1_acts, l1_acts_sf, l2_acts, l2_acts_sf, and
    group, rank, num_ranks and the sizes it was created with. Callers fill x[:T], x_sf[:T] (FP8 only),
    topk_idx[:T] and topk_weights[:T] before every Mega MoE call.
    """

    def __init__(self, group, num_experts, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden,
                 num_ring_tokens, mma_type="fp8xfp4", activation="swiglu", device=None):
        _check_choice(mma_type, "mma_type", _MMA_TYPES)
        _check_choice(activation, "activation", ("swiglu",))
        if group is None:
            rank, world = 0, 1
        else:
            rank, world = group.rank(), group.size()
        device = _buffer_device(device)
        for name, v, lo in (("num_experts", num_experts, 1), ("num_max_tokens_per_rank", num_max_tokens_per_rank, 0),
                            ("num_topk", num_topk, 1), ("hidden", hidden, 1),
                            ("intermediate_hidden", intermediate_hidden, 1), ("num_ring_tokens", num_ring_tokens, 0)):
            _check_int(v, name, lo)
        num_bytes, slicer = _C.get_symm_buffer_size_for_mega_moe(world, num_experts, num_max_tokens_per_rank,
                                                                 num_topk, hidden, intermediate_hidden,
                                                                 num_ring_tokens, mma_type)
        self.group, self.rank, self.num_ranks = group, rank, world
        self.num_experts, self.num_max_tokens_per_rank, self.num_topk = num_experts, num_max_tokens_per_rank, num_topk
        self.hidden, self.intermediate_hidden, self.num_ring_tokens = hidden, intermediate_hidden, num_ring_tokens
        self.mma_type, self.activation, self.num_bytes = mma_type, activation, num_bytes
        self._ipc = None  # NPU buffers of several ranks: (keys by rank, the ranks imported)
        if device.type == "npu":  # the NPU kernels' barriers need no host registration
            buf = torch.zeros(num_bytes, dtype=torch.int8, device=device)
            self._mapped = [buf]
            ptrs = [buf.data_ptr()]
            if world > 1:
                index = device.index if device.index is not None else torch.npu.current_device()
                ptrs, keys = _share_npu_buffers(group, rank, world, buf, index)
                self._ipc = (keys, [r for r in range(world) if r != rank])
            self.buffer = buf
            self.handle = _Handle(ptrs)
            for name, view in slicer(self.buffer).items():
                setattr(self, name, view)
            return
        if world == 1:
            self._mapped = [torch.zeros(num_bytes, dtype=torch.int8)]
            _C.mega_moe_register_process(self._mapped[0].data_ptr())
        else:
            self._mapped = _map_peer_buffers(group, rank, world, num_bytes)
        self.buffer = self._mapped[rank]
        self.handle = _Handle(t.data_ptr() for t in self._mapped)
        for name, view in slicer(self.buffer).items():
            setattr(self, name, view)

    @property
    def num_experts_per_rank(self):
        return self.num_experts // self.num_ranks

    def _shape(self):
        return (self.num_experts, self.num_max_tokens_per_rank, self.num_topk, self.hidden, self.intermediate_hidden,
                self.num_ring_tokens, self.mma_type)

    def destroy(self):
        """Unmaps every rank's buffer from this process; the object is unusable afterwards. NPU buffers of
        several ranks: collective (the peers' imports are closed before each rank's own export)."""
        if self._ipc is not None:
            keys, imported = self._ipc
            self._ipc = None
            _close_npu_buffers(self.group, self.rank, keys, imported)
        self._mapped = []
        self.buffer = None
        self.handle = _Handle([])


def get_symm_buffer_for_mega_moe(group, num_experts, num_max_tokens_per_rank, num_topk, hidden,
                                 intermediate_hidden, use_fp8_dispatch=None, mma_type="fp8xfp4",
                                 activation="swiglu", device=None):
    """Collective: allocates the symmetric buffer with num_max_tokens_per_rank rounded up to the
    token alignment (384) and the default ring size (see get_ring_limit_for_mega_moe). device: None or
    'cpu' (host memory, shared between the local ranks) or an NPU device (the ranks of one node share
    their buffers through ACL's IPC memory)."""
    _check_choice(mma_type, "mma_type", _MMA_TYPES)
    if use_fp8_dispatch is not None and bool(use_fp8_dispatch) != (mma_type == "fp8xfp4"):
        raise ValueError(f"use_fp8_dispatch: {use_fp8_dispatch} disagrees with mma_type={mma_type!r} "
                         "(the argument is deprecated; pass mma_type only)")
    world = 1 if group is None else group.size()
    _check_int(num_experts, "num_experts", 1)
    _check_int(num_max_tokens_per_rank, "num_max_tokens_per_rank", 0)
    _check_int(num_topk, "num_topk", 1)
    if num_experts % world:
        raise ValueError(f"num_experts: must be a multiple of the world size {world}, got {num_experts}")
    n = align(num_max_tokens_per_rank, _C.get_token_alignment_for_mega_moe())
    ring = _C.get_default_ring_tokens_for_mega_moe(n, num_experts // world, num_topk, world)
    return SymmBuffer(group, num_experts, n, num_topk, hidden, intermediate_hidden, ring, mma_type, activation,
                      device)


def _interleave_rows(t):
    """Rows [gate (I) | up (I)] -> [gate 0..7, up 0..7, gate 8..15, up 8..15, ...] along dim 1."""
    rows = t.size(1)
    if rows % (2 * _L1_INTERLEAVE):
        raise ValueError(f"l1_weights: 2 * intermediate_hidden must be a multiple of {2 * _L1_INTERLEAVE}, "
                         f"got {rows} rows")
    inter = rows // 2
    idx = torch.arange(rows).view(-1, 2, _L1_INTERLEAVE)  # new position 16b + 8s + j
    b, s, j = idx // (2 * _L1_INTERLEAVE), (idx // _L1_INTERLEAVE) % 2, idx % _L1_INTERLEAVE
    perm = (s * inter + b * _L1_INTERLEAVE + j).reshape(-1)
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
    out.copy_(t.index_select(1, perm.to(t.device)))
    return out


def _widen_fp4(w, name):
    """Packed FP4 codes [E, rows, K/2] (low nibble first) -> float8_e4m3fn [E, rows, K], exactly (every E2M1
    value is an e4m3 value), one expert at a time through a table of the 256 code pairs."""
    from .utils.math import _check_packed_fp4, _fp4_decode
    _check_packed_fp4(w, name)
    pairs = torch.arange(256)  # the table is built on the host: only the gathers run on w's device
    lut = _fp4_decode(torch.stack([pairs & 0xF, pairs >> 4], dim=-1)).to(torch.float8_e4m3fn).view(torch.uint8)
    lut = lut.to(w.device)
    out = torch.empty(w.size(0), w.size(1), 2 * w.size(2), dtype=torch.uint8, device=w.device)
    for e in range(w.size(0)):
        codes = w[e].contiguous().view(torch.uint8).reshape(-1).to(torch.int32)
        out[e].view(-1, 2).copy_(lut.index_select(0, codes))
    return out.view(torch.float8_e4m3fn)


def transform_weights_for_mega_moe(l1_weights, l2_weights, activation="swiglu"):
    """Interleaves the gate/up rows of L1 in chunks of 8 (weights and, on the FP4 path, their scales).

    Tuple inputs ((W1 int8 [E, 2I, H/2], SF1 [E, 2I, H/128] int32), (W2, SF2)) are the FP4 path,
    tensor inputs (W1 bf16 [E, 2I, H], W2 [E, H, I]) the BF16 path. Unlike SM100, the Ascend cube
    reads MX scales in weight-row order, so SF rows are not permuted for tensor memory; L2 is
    returned unchanged. Returns (l1, l2) in the form the inputs had, except that for the NPU kernels
    (runtime.on_npu_kernels) the FP4 weights come back widened to float8_e4m3fn [E, rows, K] (exact, twice
    the bytes): the 950's MX cube pairs e4m3 with e4m3 only, and weights widened here once are not widened
    again on every call.
    """
    _check_choice(activation, "activation", ("swiglu",))
    if isinstance(l1_weights, tuple) != isinstance(l2_weights, tuple):
        raise TypeError("l1_weights, l2_weights: pass both as (weights, scales) tuples (FP4) or both as tensors (BF16)")
    if isinstance(l1_weights, tuple):
        if len(l1_weights) != 2 or len(l2_weights) != 2:
            raise ValueError("l1_weights, l2_weights: expected (weights, scales) pairs")
        (w1, sf1), (w2, sf2) = l1_weights, l2_weights
        for name, t in (("l1_weights", w1), ("l1_weights scales", sf1), ("l2_weights", w2), ("l2_weights scales", sf2)):
            if not isinstance(t, torch.Tensor) or t.dim() != 3:
                raise ValueError(f"{name}: expected a 3-D tensor [E, rows, K...]")
        if sf1.size(1) != w1.size(1):
            raise ValueError(f"l1_weights: scales have {sf1.size(1)} rows, weights {w1.size(1)}")
        from .runtime import on_npu_kernels
        if on_npu_kernels(w1):
            return ((_widen_fp4(_interleave_rows(w1), "l1_weights"), _interleave_rows(sf1)),
                    (_widen_fp4(w2, "l2_weights"), sf2))
        return (_interleave_rows(w1), _interleave_rows(sf1)), (w2, sf2)
    for name, t in (("l1_weights", l1_weights), ("l2_weights", l2_weights)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3:
            raise ValueError(f"{name}: expected a 3-D tensor [E, rows, K]")
    return _interleave_rows(l1_weights), l2_weights


def _clamp(activation_clamp):
    if activation_clamp is None:
        return -1.0
    if isinstance(activation_clamp, bool) or not isinstance(activation_clamp, (int, float)):
        raise TypeError(f"activation_clamp: expected a float or None, got {type(activation_clamp).__name__}")
    if not activation_clamp >= 0:
        raise ValueError(f"activation_clamp: must be >= 0 or None, got {activation_clamp}")
    return float(activation_clamp)


def _check_buffer(sym_buffer, mma_type, fn, y):
    if not isinstance(sym_buffer, SymmBuffer):
        raise TypeError(f"sym_buffer: expected a SymmBuffer, got {type(sym_buffer).__name__}")
    if sym_buffer.buffer is None:
        raise RuntimeError("sym_buffer: destroyed")
    if isinstance(y, torch.Tensor) and y.device.type != sym_buffer.buffer.device.type:
        raise ValueError(f"sym_buffer: is on {sym_buffer.buffer.device} but y is on {y.device} (create the buffer "
                         "with device=y.device)")
    if sym_buffer.mma_type != mma_type:
        raise ValueError(f"sym_buffer: created with mma_type={sym_buffer.mma_type!r}; {fn} needs {mma_type!r}")


def _mega_moe(y, l1, l1_sf, l2, l2_sf, sym_buffer, stats, activation, activation_clamp, fast_math):
    _check_choice(activation, "activation", ("swiglu",))
    clamp = _clamp(activation_clamp)
    _ops.check_tensors(y=y, l1_weights=l1, l2_weights=l2, cumulative_local_expert_recv_stats=stats)
    _ops.check_tensors(l1_weights=l1_sf, l2_weights=l2_sf)
    _ops.mega_moe(list(sym_buffer.handle.buffer_ptrs), sym_buffer.rank, *sym_buffer._shape(), y, l1, l1_sf, l2, l2_sf,
                  stats, clamp, bool(fast_math))


def fp8_fp4_mega_moe(y, l1_weights, l2_weights, sym_buffer, cumulative_local_expert_recv_stats=None,
                     recipe=(1, 1, 32), activation="swiglu", activation_clamp=None, fast_math=True):
    """Collective over sym_buffer's group. For every (token, slot) of every rank routed to one of
    this rank's experts: h = x @ W1[e]^T (FP8 x FP4, UE8M0 per 32), SwiGLU of the bf16 gate/up halves
    (clamped by activation_clamp) times the routing weight, re-quantised to FP8 per 32 with
    power-of-two scales, then o = bf16(act @ W2[e]^T); y[t] = bf16(sum over valid slots, ascending,
    of float(o)). Inputs are read from sym_buffer.x[:T], x_sf[:T], topk_idx[:T] (-1 = unused slot)
    and topk_weights[:T], T = y.size(0).

    y: bf16 [T, H], T <= num_max_tokens_per_rank. l1_weights = (W1 int8 [E, 2I, H/2], SF1 int32
    [E, 2I, H/128]) and l2_weights = (W2 int8 [E, H, I/2], SF2 int32 [E, H, I/128]) after
    transform_weights_for_mega_moe (E = experts per rank; the NPU kernels also take, and the transform
    gives them, W1 / W2 widened to float8_e4m3fn [E, 2I, H] / [E, H, I]). cumulative_local_expert_recv_stats: int32
    [E], incremented by the pairs each local expert received. recipe must be (1, 1, 32).
    Raises TypeError / ValueError for bad arguments and RuntimeError naming the rank when a peer
    fails, exits or does not arrive in time.
    """
    _check_buffer(sym_buffer, "fp8xfp4", "fp8_fp4_mega_moe", y)
    if tuple(recipe) != (1, 1, 32):
        raise ValueError(f"recipe: must be (1, 1, 32), got {tuple(recipe)}")
    for name, w in (("l1_weights", l1_weights), ("l2_weights", l2_weights)):
        if not isinstance(w, tuple) or len(w) != 2:
            raise TypeError(f"{name}: expected a (weights, scales) tuple")
    _mega_moe(y, l1_weights[0], l1_weights[1], l2_weights[0], l2_weights[1], sym_buffer,
              cumulative_local_expert_recv_stats, activation, activation_clamp, fast_math)


def bf16_mega_moe(y, l1_weights, l2_weights, sym_buffer, cumulative_local_expert_recv_stats=None,
                  activation="swiglu", activation_clamp=None, fast_math=True):
    """BF16 Mega MoE (buffer created with mma_type='bf16xbf16'): as fp8_fp4_mega_moe with BF16 x,
    l1_weights bf16 [E, 2I, H], l2_weights bf16 [E, H, I] and the activation rounded to bf16."""
    _check_buffer(sym_buffer, "bf16xbf16", "bf16_mega_moe", y)
    for name, w in (("l1_weights", l1_weights), ("l2_weights", l2_weights)):
        if not isinstance(w, torch.Tensor):
            raise TypeError(f"{name}: expected a bf16 tensor")
    _mega_moe(y, l1_weights, None, l2_weights, None, sym_buffer, cumulative_local_expert_recv_stats, activation,
              activation_clamp, fast_math)


def swiglu_quant(h, topk_weights, activation_clamp=None, fast_math=True, use_fp8=True, interleaved=False):
    """The vector stage of Mega MoE as a standalone kernel (for unfused pipelines): h bf16 [M, 2I]
    ([gate | up] halves, or interleaved by 8), topk_weights float32 [M]. Returns (act, sf): act
    float8_e4m3fn [M, I] with sf int32 [M, I/128] (UE8M0 per 32, K-major), or act bf16 and sf None."""
    if not isinstance(h, torch.Tensor) or h.dim() != 2:
        raise ValueError("h: expected a 2-D tensor [M, 2I]")
    m, inter = h.size(0), h.size(1) // 2
    act = torch.empty((m, inter), dtype=torch.float8_e4m3fn if use_fp8 else torch.bfloat16, device=h.device)
    sf = torch.empty((m, inter // 128), dtype=torch.int32, device=h.device) if use_fp8 else None
    _ops.check_tensors(h=h, topk_weights=topk_weights)
    _ops.mega_moe_swiglu(h, topk_weights, act, sf, _clamp(activation_clamp), bool(fast_math), bool(interleaved))
    return act, sf
