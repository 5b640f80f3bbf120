"""When a recognised cell runs faster as its *Sequence-5 op than as an optimised Loop-5."""

from __future__ import annotations

from ov_loops.loopir.loop import LoopIR
from ov_loops.lower.cells import Cell


class CellLowering:
    """The cell lowering as the target profiles see it: a name to skip it by, and its level."""

    name = "recognize-cells"
    level = "max"


def sequence_is_faster(cell: Cell, loop: LoopIR) -> bool:
    """Whether `cell` is expected to run faster as its *Sequence-5 op."""
    return True
