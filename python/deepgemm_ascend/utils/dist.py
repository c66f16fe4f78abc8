"""Upstream deep_gemm.utils' distributed helpers: process-group set-up for the ranks of a job, an
all-gather of tensors whose leading sizes differ between ranks, and a print that every rank passes together."""
import inspect
import os

import torch

_local_rank = None  # this process's rank within its node, recorded by init_dist for dist_print


def init_dist(local_rank, num_local_ranks):
    """Joins the job's default process group and returns (rank, world size, a group of every rank).

    Rendezvous at tcp://MASTER_ADDR:MASTER_PORT (default 127.0.0.1:8361); WORLD_SIZE counts nodes and RANK
    is this node's index (defaults 1 and 0), as upstream. With torch_npu loaded and an NPU present the
    backend is HCCL and `local_rank` selects this process's NPU (the default device afterwards); otherwise
    gloo on the CPU (upstream: NCCL and CUDA). Records `local_rank` for dist_print."""
    import torch.distributed as dist

    global _local_rank

    for v, arg in ((local_rank, "local_rank"), (num_local_ranks, "num_local_ranks")):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{arg}: expected an int, got {type(v).__name__}")
    if not 0 <= local_rank < num_local_ranks:
        raise ValueError(f"local_rank: expected 0 <= local_rank < num_local_ranks = {num_local_ranks}, got {local_rank}")
    ip = os.getenv("MASTER_ADDR", "127.0.0.1")
    port = int(os.getenv("MASTER_PORT", "8361"))
    num_nodes, node_rank = int(os.getenv("WORLD_SIZE", "1")), int(os.getenv("RANK", "0"))
    npu = hasattr(torch, "npu") and torch.npu.is_available()
    params = {"backend": "hccl" if npu else "gloo", "init_method": f"tcp://{ip}:{port}",
              "world_size": num_nodes * num_local_ranks, "rank": node_rank * num_local_ranks + local_rank}
    if npu and "device_id" in inspect.signature(dist.init_process_group).parameters:
        params["device_id"] = torch.device(f"npu:{local_rank}")
    dist.init_process_group(**params)
    _local_rank = local_rank
    if npu:
        torch.npu.set_device(local_rank)
        torch.set_default_device("npu")
    return dist.get_rank(), dist.get_world_size(), dist.new_group(list(range(num_local_ranks * num_nodes)))


def uneven_all_gather(tensor, dim=0, group=None):
    """Every rank's `tensor` concatenated along `dim` in rank order; the ranks' sizes along `dim` may
    differ (the other dimensions may not)."""
    import torch.distributed as dist

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"tensor: expected a torch.Tensor, got {type(tensor).__name__}")
    world = dist.get_world_size(group)
    size = torch.tensor([tensor.shape[dim]], dtype=torch.long, device=tensor.device)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size, group=group)
    sizes = [int(s) for s in sizes]
    longest = max(sizes)
    padded = tensor.contiguous()
    if tensor.shape[dim] < longest:
        shape = list(tensor.shape)
        shape[dim] = longest - tensor.shape[dim]
        padded = torch.cat([padded, torch.zeros(shape, dtype=tensor.dtype, device=tensor.device)], dim=dim)
    gathered = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(gathered, padded, group=group)
    return torch.cat([g.narrow(dim, 0, s) for g, s in zip(gathered, sizes)], dim=dim)


def dist_print(s="", once_in_node=False):
    """Prints `s` (flushed) on every rank, or with once_in_node=True on the first rank of each node only
    (local rank 0 of init_dist), then waits for every rank of the default group (a barrier), so that the
    ranks' lines come out step by step. Collective: every rank must call it. Needs init_dist first."""
    import torch.distributed as dist

    if not isinstance(s, str):
        raise TypeError(f"s: expected a str, got {type(s).__name__}")
    if not isinstance(once_in_node, bool):
        raise TypeError(f"once_in_node: expected a bool, got {type(once_in_node).__name__}")
    if _local_rank is None:
        raise RuntimeError("dist_print: call init_dist first (it records this process's local rank)")
    if not once_in_node or _local_rank == 0:
        print(s, flush=True)
    dist.barrier()
