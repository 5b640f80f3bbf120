"""Lowering: a loop that provably runs no iteration becomes its zero-iteration values."""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR


def fold_reason(loop: LoopIR) -> str:
    """Why `loop` runs no iteration (it must: `loop.runs_zero_times`)."""
    return "trip count 0" if loop.trip.proven_zero else "initial condition false"


def fold(loop: LoopIR) -> list[ov.Output]:
    """The values of a loop that runs zero times, in result order (no Loop: the CPU plugin
    crashes on Loops that provably run zero times)::

        result with an initial value   -> initial (behind a node of its own)
        concatenated output            -> empty along its axis, other dims static or 0
        other last-value output        -> an empty stack of its per-iteration value along 0
    """
    concatenated = {entry.external_port: entry for entry in loop.spec.concatenated_outputs}
    last_values = {entry.external_port: entry for entry in loop.spec.last_value_outputs}
    values = []
    for result in loop.results:
        if result.initial is not None:
            values.append(ovgraph.passthrough(result.initial))
        elif result.port in concatenated:
            entry = concatenated[result.port]
            values.append(ovgraph.empty_stack(loop.body_value(entry.body_result), entry.axis))
        else:
            value = loop.body_value(last_values[result.port].body_result)
            values.append(ovgraph.empty_stack(value, 0, stacked=False))
    return values
