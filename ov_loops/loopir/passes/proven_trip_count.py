"""Pass: a loop whose execution condition is a function of counters proves its trip count.

Exporters write counted loops as while loops: tf2onnx's Keras RNNs and `tf.scan` compute
`cond = i + 1 < T and iteration < T` in the body, with T a static length once input shapes
are static. Targets that unroll (GPU, NPU) need the count as a constant.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass

# The most iterations whose condition is evaluated (a longer loop is not unrolled anyway).
MAX_PROVEN = 4096


class ProveTripCount(LoopPass):
    """When the loop starts (initial condition a constant true) and its body's execution
    condition is computed from the iteration number, counters and constants alone, evaluate
    the condition after each iteration and make the count it gives the trip count, the
    condition a constant true (Loop-5 spec: iteration k runs iff k < trip count and the
    condition after iteration k-1 was true)::

        value of a body Parameter at iteration k:
            current_iteration                      -> k
            invariant input, outer value folds     -> outer
            merged input, initial c0 folds, back edge Parameter + s (s folds) -> c0 + k * s
            merged input, initial c0 folds, back edge the Parameter itself    -> c0
        runs = the first k + 1 with cond(k) false, for k < min(trip count, MAX_PROVEN) - 1,
               else the trip count (a constant one; an unbounded loop is left as it is)
        trip count = runs; cond = true

    A condition reading anything else (data, a sliced input) is left as it is.
    """

    name = "prove-trip-count"

    def run(self, loop: LoopIR) -> LoopIR:
        condition = loop.spec.execution_condition
        if condition is None or loop.start.constant is not True:
            return loop
        value = loop.body_value(condition)
        if ovgraph.constant_value(value) is not None:
            return loop
        counters = _counters(loop)
        if counters is None:
            return loop
        runs = _runs(value, counters, loop.trip.constant)
        if runs is None:
            return loop
        loop.body.get_results()[condition].input(0).replace_source_output(
            ops.constant(True).output(0)
        )
        return loop.with_trip_count(runs)


def _runs(
    condition: ov.Output,
    counters: dict[ov.Output, tuple[np.ndarray, np.ndarray]],
    trips: int | None,
) -> int | None:
    """How many iterations run (see ProveTripCount), or None when a condition does not fold or
    none is false before the last MAX_PROVEN iterations of an unbounded loop."""
    last = MAX_PROVEN if trips is None else min(trips, MAX_PROVEN + 1)
    for k in range(last - 1):
        given = {
            output: (start + k * step).astype(start.dtype)
            for output, (start, step) in counters.items()
        }
        flag = ovgraph.folded_value(condition, given)
        if flag is None or flag.size != 1:
            return None
        if not bool(flag.reshape(-1)[0]):
            return k + 1
    return trips if trips is not None and trips <= MAX_PROVEN + 1 else None


def _counters(loop: LoopIR) -> dict[ov.Output, tuple[np.ndarray, np.ndarray]] | None:
    """Each body Parameter's value at iteration k as (start, step): k -> start + k * step,
    for the Parameters whose values are known that way (see ProveTripCount); None when the
    loop has none of its current iteration or counters."""
    parameters = loop.body.get_parameters()
    known = {}
    if loop.spec.current_iteration is not None:
        iteration = parameters[loop.spec.current_iteration].output(0)
        dtype = iteration.get_element_type().to_dtype()
        known[iteration] = (np.array(0, dtype), np.array(1, dtype))
    for entry in loop.spec.invariant_inputs:
        start = ovgraph.folded_value(loop.outer[entry.external_port])
        if start is not None:
            known[parameters[entry.body_parameter].output(0)] = (start, np.zeros_like(start))
    for entry in loop.spec.merged_inputs:
        parameter = parameters[entry.body_parameter].output(0)
        start = ovgraph.folded_value(loop.outer[entry.external_port])
        step = _step(parameter, loop.body_value(entry.body_result))
        if start is not None and step is not None and _steps(start, step):
            known[parameter] = (start, step.astype(start.dtype))
    return known or None


def _steps(start: np.ndarray, step: np.ndarray) -> bool:
    """Whether start + k * step keeps start's shape and type (an integer or float counter)."""
    same = np.broadcast_shapes(start.shape, step.shape) == start.shape
    return same and start.dtype.kind in "iuf" and step.dtype.kind in "iuf"


def _step(parameter: ov.Output, successor: ov.Output) -> np.ndarray | None:
    """s when `successor` is `parameter` + s (s folds) or `parameter` itself (s = 0)."""
    if successor == parameter:
        return np.zeros((), parameter.get_element_type().to_dtype())
    node = successor.get_node()
    if node.get_type_name() != "Add":
        return None
    left, right = node.input_value(0), node.input_value(1)
    other = right if left == parameter else left if right == parameter else None
    return None if other is None else ovgraph.folded_value(other)
