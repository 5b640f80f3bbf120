"""Lowering: a loop that provably runs no iteration becomes its zero-iteration values."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR


def fold_reason(loop: LoopIR) -> str:
    """Why `loop` runs no iteration (it must: `loop.runs_zero_times`)."""
    return "trip count 0" if loop.trip.proven_zero else "initial condition false"


def fold(loop: LoopIR) -> list[ov.Output]:
    """The values of a loop that runs zero times, in result order (no Loop: the CPU plugin
    crashes on Loops that provably run zero times)::

        result with an initial value   -> initial (behind a node of its own)
        concatenated output            -> empty along its axis, other dims static or 0,
                                          or as the frontend's `empty_shape` says
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
            value = loop.body_value(entry.body_result)
            if result.empty_shape is None:
                values.append(ovgraph.empty_stack(value, entry.axis))
            else:
                values.append(empty_of_shape(value.get_element_type(), result.empty_shape))
        else:
            value = loop.body_value(last_values[result.port].body_result)
            values.append(ovgraph.empty_stack(value, 0, stacked=False))
    return values


def empty_of_shape(element: ov.Type, shape: ov.Output) -> ov.Output:
    """An empty tensor of `shape` (a frontend's zero-iteration shape, which may read outer
    dims: Scan-8's [0, T, ...] of an empty batch): a Constant when the shape folds."""
    dims = ovgraph.folded_value(shape)
    if dims is not None:
        return ops.constant(np.zeros(dims.astype(np.int64), np.uint8), element).output(0)
    zero = ops.constant(np.zeros((), np.uint8), element)
    return ops.broadcast(zero, shape).output(0)
