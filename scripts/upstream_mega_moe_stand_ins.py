"""CPU stand-ins for the third-party baseline of upstream DeepGEMM's tests/test_mega_moe.py, for
scripts/run_upstream_tests.py. That test checks the fused Mega MoE bit for bit against an unfused pipeline
of DeepEP's `ElasticBuffer.dispatch`, two M-grouped contiguous GEMMs (deep_gemm's, here this package's), the
TileLang kernel behind third-party/tilelang_ops' `swiglu_apply_weight_to_fp8` and `ElasticBuffer.combine`,
and times it with `tilelang.profiler.bench.do_bench`. Without DeepEP and TileLang it skips that check.

These stand-ins compute that baseline from this package's unfused pieces (as deepgemm_ascend.testing.mega_moe
does); nothing reads the fused result:

* `deep_ep.ElasticBuffer`: dispatch with do_expand=True only (every (token, slot) pair routed to one of a
  rank's experts becomes one row of that rank's psum layout: experts in order, rows of an expert by source
  rank, token and slot, each expert starting at a multiple of expert_alignment, padding rows zero), through
  torch.distributed all_to_all; combine sums each token's rows in slot order in fp32 and rounds once to bf16.
  Only the results the test reads are modelled (recv_x, recv_topk_weights,
  handle.psum_num_recv_tokens_per_expert, the receive statistics, the combined tokens); the others are None.
* `tilelang.jit` of `_swiglu_apply_weight_to_fp8_tl` only (upstream's own wrapper in third-party/tilelang_ops
  runs unchanged around it): the kernel is this package's SwiGLU stage, `deepgemm_ascend.mega.swiglu_quant`
  (UE8M0 scales per 32, written in the wrapper's column-major packed layout, or bf16 output), on rows below
  avail_tokens; other rows stay as the wrapper allocated them, as the TileLang kernel leaves them.
* `tilelang.profiler.bench.do_bench`: wall-clock time of fn in milliseconds.

`install()` makes these importable as deep_ep, tilelang, tilelang.language, tilelang.profiler and
tilelang.profiler.bench when no real package of that name is installed.
"""
import importlib.abc
import importlib.machinery
import statistics
import sys
import time
import types

_GRAN = 32  # channels per UE8M0 scale of the SwiGLU stage


class EPHandle:
    """What combine needs to send the expert outputs back, and the layout of the received rows."""

    def __init__(self, psum, rows, t_idx, k_idx, send, recv, topk_idx):
        self.psum_num_recv_tokens_per_expert = psum  # int32 [local experts]: each expert's end row
        self.rows = rows                  # the row of each received pair, in the order they arrived
        self.t_idx, self.k_idx = t_idx, k_idx  # (token, slot) of each pair sent, in the order sent
        self.send, self.recv = send, recv  # pairs sent to / received from each rank
        self.num_tokens, self.num_topk = topk_idx.shape


class ElasticBuffer:
    """deep_ep.ElasticBuffer for the expanded dispatch and combine of one group (sizes are only recorded)."""

    def __init__(self, group, num_max_tokens_per_rank=0, hidden=0, num_topk=0, use_fp8_dispatch=False,
                 explicitly_destroy=False, **_sizing_and_timeouts):
        self.group, self.hidden, self.num_topk = group, hidden, num_topk

    def _exchange(self, rows, send, recv):
        from deepgemm_ascend.testing.mega_moe import _all_to_all
        return _all_to_all(rows, send, recv, self.group) if self.group.size() > 1 else rows

    def dispatch(self, x, topk_idx=None, topk_weights=None, cumulative_local_expert_recv_stats=None,
                 num_experts=None, expert_alignment=1, do_expand=False, use_tma_aligned_col_major_sf=False,
                 handle=None, do_cpu_sync=True, do_handle_copy=True, **unsupported):
        """(recv_x, None, recv_topk_weights, handle, None); recv_x is bf16 [M, H] or (FP8 [M, H], int32
        scales [M, H/128]) as x was given. do_cpu_sync and do_handle_copy have no effect on the CPU."""
        import torch
        import torch.distributed as dist

        from deepgemm_ascend.utils.math import align

        if not do_expand or handle is not None or unsupported:
            raise NotImplementedError("ElasticBuffer stand-in: only a fresh dispatch with do_expand=True "
                                      f"(got do_expand={do_expand}, handle={handle is not None}, {sorted(unsupported)})")
        x, sf = x if isinstance(x, tuple) else (x, None)
        world, rank = self.group.size(), self.group.rank()
        per_rank = num_experts // world
        t_idx, k_idx = (topk_idx >= 0).nonzero(as_tuple=True)  # token-major, slots ascending
        expert = topk_idx[t_idx, k_idx]
        order = torch.argsort(expert // per_rank, stable=True)
        t_idx, k_idx, expert = t_idx[order], k_idx[order], expert[order]
        send_t = torch.bincount(expert // per_rank, minlength=world)
        recv_t = torch.empty_like(send_t)
        dist.all_to_all_single(recv_t, send_t, group=self.group)
        send, recv = send_t.tolist(), recv_t.tolist()
        payload = [x[t_idx], topk_weights[t_idx, k_idx].float(), expert % per_rank] + ([sf[t_idx]] if sf is not None
                                                                                       else [])
        x_r, w_r, e_r, *sf_r = [self._exchange(p, send, recv) for p in payload]

        counts = torch.bincount(e_r, minlength=per_rank)
        ends, at = [], 0
        for c in counts.tolist():
            at = align(at, expert_alignment) + c
            ends.append(at)
        m = max(align(at, expert_alignment), expert_alignment)
        starts = [e - c for e, c in zip(ends, counts.tolist())]
        by_expert = torch.argsort(e_r, stable=True)  # within an expert: source rank, token, slot
        rows = torch.empty_like(by_expert)
        rows[by_expert] = torch.cat([torch.arange(s, e) for s, e in zip(starts, ends)])
        recv_x = torch.zeros(m, x.size(1), dtype=x.dtype)
        recv_x[rows] = x_r
        recv_w = torch.zeros(m, dtype=torch.float32)
        recv_w[rows] = w_r
        if sf is not None:
            # int32 scales [M, H/128] column-major, the token dimension padded to 4 (16 bytes), as TMA wants
            recv_sf = torch.zeros(sf.size(1), align(m, 4), dtype=sf.dtype).T[:m]
            recv_sf[rows] = sf_r[0]
            recv_x = (recv_x, recv_sf if use_tma_aligned_col_major_sf else recv_sf.contiguous())
        if cumulative_local_expert_recv_stats is not None:
            cumulative_local_expert_recv_stats += counts.to(cumulative_local_expert_recv_stats.dtype)
        handle = EPHandle(torch.tensor(ends, dtype=torch.int32), rows, t_idx, k_idx, send, recv, topk_idx)
        return recv_x, None, recv_w, handle, None

    def combine(self, x, handle=None, topk_weights=None, **_options):
        """(bf16 [T, H]: per token the sum of its rows of x in slot order, in fp32, rounded once, None, None)."""
        import torch

        back = self._exchange(x[handle.rows], handle.recv, handle.send)
        acc = torch.zeros(handle.num_tokens, x.size(1), dtype=torch.float32)
        for k in range(handle.num_topk):
            sel = handle.k_idx == k
            acc[handle.t_idx[sel]] += back[sel].float()
        return acc.bfloat16(), None, None

    def barrier(self, use_comm_stream=True):
        """A barrier of the buffer's group."""
        import torch.distributed as dist
        dist.barrier(group=self.group)

    def destroy(self):
        """Nothing to free on the CPU."""


def _swiglu_kernel(half_hidden, num_per_channels, use_col_major_scales, round_scale, ue8m0_scale, num_ctas,
                   has_topk_weights, has_avail_tokens, has_clamp_value, output_bf16, fast_math):
    """The compiled kernel of _swiglu_apply_weight_to_fp8_tl for one configuration, on this package's stage."""
    fp8 = not output_bf16
    if fp8 and not (ue8m0_scale and round_scale and use_col_major_scales and num_per_channels == _GRAN):
        raise NotImplementedError("swiglu stand-in: FP8 output needs UE8M0 scales per 32, column-major")

    def kernel(x, topk_weights, avail_tokens, out, out_sf, out_bf16, clamp_value):
        import torch

        from deepgemm_ascend.mega import swiglu_quant

        n = int(avail_tokens[0]) if has_avail_tokens else x.size(0)
        w = topk_weights[:n] if has_topk_weights else torch.ones(n, dtype=torch.float32)
        act, sf = swiglu_quant(x[:n], w, clamp_value if has_clamp_value else None, fast_math, use_fp8=fp8)
        if output_bf16:  # the FP8 copy with float scales beside it has no kernel here: NaN marks it
            out_bf16[:n] = act
            out[:n] = float("nan")
            out_sf.view(torch.uint8).fill_(0xFF)  # NaN as float32 and as UE8M0
            return
        out[:n] = act
        out_sf.view(torch.int32)[:, :n] = sf.T  # the wrapper's [H/128, align(T, 4)] words of 4 UE8M0 bytes

    return kernel


class _Jit:
    """What tilelang.jit returns: called with the configuration, gives the kernel."""

    def __init__(self, build):
        self.build, self.pass_configs = build, {}

    def __call__(self, *config):
        return self.build(*config)


def jit(fn):
    """tilelang.jit for the one kernel test_mega_moe.py's baseline compiles."""
    if fn.__name__ != "_swiglu_apply_weight_to_fp8_tl":
        raise NotImplementedError(f"tilelang stand-in: no CPU kernel for {fn.__name__}")
    return _Jit(_swiglu_kernel)


class PassConfigKey:
    """Compiler options the wrapper sets; no meaning here."""
    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, quantiles=None, return_mode="mean", **_backend):
    """Milliseconds per call of fn (wall clock): _n_warmup calls (default 1), then _n_repeat timed calls
    (default 3) reduced by return_mode (mean, median, min or max) or to the given quantiles."""
    for _ in range(_n_warmup or 1):
        fn()
    times = []
    for _ in range(_n_repeat or 3):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    if quantiles is not None:
        ordered = sorted(times)
        return [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
    reduce = {"mean": statistics.mean, "median": statistics.median, "min": min, "max": max}[return_mode]
    return reduce(times)


def _modules():
    """The stand-in modules by name (packages get an empty __path__ so that their submodules resolve)."""
    mods = {name: types.ModuleType(name) for name in
            ("deep_ep", "tilelang", "tilelang.language", "tilelang.profiler", "tilelang.profiler.bench")}
    mods["deep_ep"].ElasticBuffer = ElasticBuffer
    mods["tilelang"].jit, mods["tilelang"].PassConfigKey = jit, PassConfigKey
    mods["tilelang.profiler.bench"].do_bench = do_bench
    for name in ("tilelang", "tilelang.profiler"):
        mods[name].__path__ = []
    return mods


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the stand-in modules; placed after the standard finders, so a real package wins."""

    def __init__(self):
        self.mods = _modules()

    def find_spec(self, name, path=None, target=None):
        if name not in self.mods:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=hasattr(self.mods[name], "__path__"))

    def create_module(self, spec):
        return self.mods[spec.name]

    def exec_module(self, module):
        pass


def install():
    """Makes the stand-ins importable (once per process)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
