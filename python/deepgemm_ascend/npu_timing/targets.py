"""The speed targets of our NPU kernels on the timing model: per case the fraction of its bound (bounds.py) its
predicted time must reach. `deepgemm-ascend model --targets` runs them all and says which are met.

The shapes are DeepSeek-V3's (dense projections, one rank of its EP8 MoE layer) and the V3.2 lightning indexer's;
the fractions are what a kernel that hides every copy behind the bounding unit reaches on the model.
"""
import dataclasses
from typing import List, Optional, Sequence

from .families import Shape


@dataclasses.dataclass(frozen=True)
class Target:
    family: str
    shape: Shape
    goal: float  # fraction of the bound, bound_us / predicted_us


def _each(families: Sequence[str], shapes: Sequence[Shape], goal: float) -> List[Target]:
    return [Target(f, s, goal) for f in families for s in shapes]


DENSE = ((4096, 7168, 16384), (4096, 2112, 7168), (2048, 7168, 2048))
DECODE = ((128, 7168, 2048), (64, 4096, 7168))
GROUPED = ((8, 4096, 4096, 7168), (4, 8192, 7168, 2048))
TARGETS: List[Target] = (
    _each(["bf16"], DENSE, 0.97)
    + _each(["mxfp8", "fp8xfp4"], DENSE, 0.95)
    + _each(["fp8"], DENSE, 0.85)
    + _each(["grouped-bf16", "grouped-mxfp8"], GROUPED, 0.90)
    + _each(["grouped-fp8"], GROUPED, 0.80)
    + [Target("masked", (16, 64, 4096, 7168), 0.75), Target("k-grouped", (32768, 4096, 7168), 0.90)]
    + _each(["bf16", "mxfp8", "fp8"], DECODE, 0.80)
    + _each(["mqa"], ((4096, 8192, 64), (4096, 65536, 64)), 0.70)
    + _each(["paged-mqa"], ((64, 8192, 64), (64, 65536, 64)), 0.70)
    + _each(["hc"], ((4096, 24, 7168), (4096, 24, 28672)), 0.70)
    + [Target("mega-moe", (4096, 7168, 2048), 0.70)]
)


def select(families: Optional[Sequence[str]]) -> List[Target]:
    """The targets of `families` (all when None), in TARGETS' order."""
    return [t for t in TARGETS if families is None or t.family in families]


def verdict(row: dict, goal: float) -> dict:
    """The target's outcome for a model row: its fraction of the bound against the goal."""
    frac = row.get("of_bound")
    return {"goal": goal, "of_bound": frac, "met": frac is not None and frac >= goal}


def format_verdicts(rows: Sequence[dict]) -> str:
    """One line per target row: met or not, its fraction of the bound and the goal; then the count met."""
    lines = []
    for r in rows:
        v = r["target"]
        frac = f"{v['of_bound']:.1%}" if v["of_bound"] is not None else "no prediction"
        shape = "x".join(map(str, r["shape"]))
        lines.append(f"{'met    ' if v['met'] else 'NOT MET'} {r['family']:<13} {shape:<22} {frac:>13} of its "
                     f"bound (goal {v['goal']:.0%})")
    met = sum(r["target"]["met"] for r in rows)
    return "\n".join(lines + [f"targets met: {met} of {len(rows)} (predictions of our timing model, not measurements)"])
