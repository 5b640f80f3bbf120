"""Choosing a lowering per loop and target."""

from __future__ import annotations

from dataclasses import dataclass

import openvino as ov

from ov_loops.contract.spec import LoopSpec
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.pipeline import TargetProfile
from ov_loops.lower.fold import fold, fold_reason
from ov_loops.lower.loop5 import lower_to_loop5


@dataclass(frozen=True)
class Lowered:
    """What a loop became: its values (in result order) and the LoopSpec of the Loop-5 emitted,
    or why it was folded away."""

    values: list[ov.Output]
    spec: LoopSpec | None
    folded: str | None = None
    applied: tuple[str, ...] = ()
    carried: tuple[str, ...] = ()  # the names of the carried values the Loop-5 carries


def lower(loop: LoopIR, target: TargetProfile, optimize: str = "none") -> Lowered:
    """Fold a loop that provably runs no iteration; otherwise run the passes of the target at
    the optimisation level `optimize` and emit a Loop-5."""
    names = tuple(value.name for value in loop.carried)
    if loop.runs_zero_times:
        return Lowered(fold(loop), None, f"runs zero times: {fold_reason(loop)}", (), names)
    loop = target.run(loop, optimize)
    names = tuple(value.name for value in loop.carried)
    return Lowered(lower_to_loop5(loop), loop.spec, None, loop.applied, names)
