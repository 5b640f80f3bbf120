"""Guards for OpenVINO runtime pitfalls around a Loop's trip count and initial condition.

See ../shared/notes/openvino-loop5.md: the CPU plugin truncates i64 trip counts to i32, crashes or
returns wrong shapes when a Loop provably runs zero times, and returns a stale concatenated output
when a run with zero iterations follows a run with some.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.loopir.trip_count import InitialCondition, TripCount
from ov_loops.ovgraph import dynamic_besides, length


def runs_zero(trip: TripCount, condition: InitialCondition) -> ov.Output | None:
    """A boolean that is true when a runtime trip count or condition stops the loop before its
    first iteration; None when neither is a runtime value."""
    checks = []
    if trip.runtime:
        checks.append(ops.equal(trip.value, ops.constant(np.int64(0))))
    if condition.runtime:
        checks.append(ops.logical_not(condition.value))
    if not checks:
        return None
    return (checks[0] if len(checks) == 1 else ops.logical_or(checks[0], checks[1])).output(0)


def guard_zero_iterations(
    outputs: list[ov.Output],
    axes: list[int],
    empty_shapes: list[ov.Output | None],
    zero: ov.Output | None,
) -> list[ov.Output]:
    """Make concatenated outputs empty, with a deterministic shape, when the loop runs zero
    times (`zero`, from `runs_zero`).

    Without this, a zero-iteration run after a run with iterations returns the earlier run's
    data and shape. The output is split into (kept, dropped) parts on its axis, kept being 0 or
    all of it, and, when other dims are dynamic (and so may be stale), reshaped to its entry of
    `empty_shapes` (when given). A split along the outermost axis runs in place on the CPU, a
    Slice copies (3% of an RNN Scan's time). Lengths come from the output's own shape, not
    large constants: the CPU plugin turned a stop of 2**31-1 into -2**31.
    """
    if zero is None or not outputs:
        return outputs
    none = ops.constant(np.array([0], np.int64))
    two = ops.constant(np.array([2], np.int64))
    guarded = []
    for output, axis, empty_shape in zip(outputs, axes, empty_shapes):
        size = ops.unsqueeze(length(output, axis), none)
        kept = ops.select(zero, none, size)
        # Shape [2] whatever `zero`'s rank: the CPU plugin cannot compile a VariadicSplit whose
        # split lengths (or, through them, outputs) have a dynamic rank.
        split_lengths = ops.reshape(ops.concat([kept, ops.subtract(size, kept)], 0), two, False)
        cut = ops.variadic_split(output, ops.constant(np.int64(axis)), split_lengths).output(0)
        if empty_shape is not None and dynamic_besides(output, axis):
            shape = ops.select(zero, empty_shape, ops.shape_of(cut, ov.Type.i64))
            cut = ops.reshape(cut, shape, False).output(0)
        guarded.append(cut)
    return guarded


def guard_last_values(
    outputs: list[ov.Output], initial: list[ov.Output], zero: ov.Output | None
) -> list[ov.Output]:
    """The initial values, not whatever the Loop left there, when it runs zero times.

    A zero-iteration run after a run with iterations returned the earlier run's last value for
    a carried value whose back edge comes from another Parameter (found by the random-body
    tests). With static equal shapes a Select picks; otherwise (a carried value whose shape
    may change) both are flattened, concatenated, and the right part is sliced out and
    reshaped, since Select cannot mix shapes.
    """
    if zero is None:
        return outputs
    guarded = []
    for output, start in zip(outputs, initial):
        shape, first = output.get_partial_shape(), start.get_partial_shape()
        if shape.is_static and first.is_static and shape == first:
            guarded.append(ops.select(zero, start, output).output(0))
        elif shape.rank.is_static and first.rank.is_static and shape.rank == first.rank:
            guarded.append(_pick_by_shape(zero, start, output))
        else:
            guarded.append(output)  # ranks differ: no shape-agnostic select in OpenVINO
    return guarded


def _pick_by_shape(zero: ov.Output, start: ov.Output, output: ov.Output) -> ov.Output:
    flat = ops.constant(np.array([-1], np.int64))
    none = ops.constant(np.array([0], np.int64))
    first, last = ops.reshape(start, flat, False), ops.reshape(output, flat, False)
    first_length = ops.shape_of(first, ov.Type.i64)
    both = ops.concat([first, last], 0)
    begin = ops.select(zero, none, first_length)
    end = ops.select(zero, first_length, ops.shape_of(both, ov.Type.i64))
    picked = ops.slice(both, begin, end, ops.constant(np.array([1], np.int64)), none)
    shape = ops.select(zero, ops.shape_of(start, ov.Type.i64), ops.shape_of(output, ov.Type.i64))
    return ops.reshape(picked, shape, False).output(0)
