"""The bound of one call on the Ascend 950: the largest of its cube time at its operand type's peak, its vector
time (the vector work the algorithm cannot avoid, at the documented bytes per cycle of every vector core) and
its HBM time (the bytes it must read and write once). Computed from the arch file's documented rates
(_C.npu_rates(): arch/ascend950.hpp's kTiming), never from a model run; `deepgemm-ascend model` reports each
prediction as a fraction of it.
"""
import dataclasses
from typing import Dict, Optional

CUBE_TYPES = ("bf16", "fp8", "fp4", "fp32")


@dataclasses.dataclass(frozen=True)
class Work:
    """What one call must do: its cube FLOP and their operand type, the bytes it must move between HBM and the
    cores (every input read once, every output written once), and its vector bytes (fp32 values the vector
    cores must pass through at least once, e.g. the partial products of a float32-scale promotion)."""
    flops: float
    cube: str
    hbm_bytes: float
    vector_bytes: float = 0.0

    def __post_init__(self):
        if self.cube not in CUBE_TYPES:
            raise ValueError(f"cube: expected one of {', '.join(CUBE_TYPES)}, got {self.cube!r}")


def rates() -> Dict[str, object]:
    from .. import _C

    return dict(_C.npu_rates())


def bound(work: Work, r: Optional[Dict[str, object]] = None) -> dict:
    """cube_us, vector_us, hbm_us and bound_us (their largest) of `work`, and which one bounds it."""
    r = r or rates()
    hz = float(r["clock_ghz"]) * 1e9
    cube = work.flops / (float(r["cube_flops_per_cycle"][work.cube]) * int(r["cube_cores"]) * hz)
    vector = work.vector_bytes / (float(r["vector_bytes_per_cycle"]) * int(r["vector_cores"]) * hz)
    hbm = work.hbm_bytes / (float(r["hbm_bytes_per_cycle"]) * hz)
    parts = {"cube": cube * 1e6, "vector": vector * 1e6, "hbm": hbm * 1e6}
    by = max(parts, key=parts.get)
    return {"cube_us": parts["cube"], "vector_us": parts["vector"], "hbm_us": parts["hbm"], "bound_us": parts[by],
            "bound_by": by}
