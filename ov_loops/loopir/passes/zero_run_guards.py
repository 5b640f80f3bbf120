"""Pass: outputs of a loop that may run zero times are guarded after it.

See ../shared/notes/openvino-loop5.md: the CPU plugin returns a stale concatenated output (and
stale last values) when a run with zero iterations follows a run with some.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.steps import AfterLoop
from ov_loops.loopir.unrolling import Unchunk
from ov_loops.ovgraph import dynamic_besides, length


class GuardZeroIterationRuns(LoopPass):
    """When a runtime trip count or condition may stop the loop before iteration 0 (and no If
    around the Loop-5 takes such runs: `zero_run_branch`, zero_run_carry.py), each
    concatenated output becomes empty on such a run, unless a step already empties it
    (unrolling's count of the copies that ran), and each last-value result with an initial
    value becomes that value (`EmptyWhenZeroRuns`, `InitialWhenZeroRuns`)::

        if loop.may_run_zero and not loop.zero_run_branch:
            concatenated result -> value if ran else empty along its axis
            last-value result with an initial value -> value if ran else initial

    A concatenated result never takes its initial value here: its later steps make it (a
    stacked accumulator's `PrependInitial` turns the empty output into the initial value;
    replacing the output by it too returned the initial value twice).
    """

    name = "guard-zero-iteration-runs"

    def run(self, loop: LoopIR) -> LoopIR:
        if not loop.may_run_zero or loop.zero_run_branch:
            return loop
        concatenated = {entry.external_port: entry for entry in loop.spec.concatenated_outputs}
        guarded = []
        for result in loop.results:
            entry = concatenated.get(result.port)
            if entry is None:
                if result.initial is not None:
                    result = result.with_step(InitialWhenZeroRuns(result.initial))
            elif not _cut_to_zero_runs(result):
                shape = result.empty_shape
                if shape is None:
                    shape = ovgraph.empty_shape(loop.body_value(entry.body_result), entry.axis)
                result = result.with_step(EmptyWhenZeroRuns(entry.axis, shape))
            guarded.append(result)
        return loop.replace(results=tuple(guarded))


def _cut_to_zero_runs(result) -> bool:
    """Whether a step of `result` already empties it after a run of no iteration (unrolling's
    `Unchunk` of masked copies, whose bodies have static shapes, so no dim is stale either): a
    second cut would copy the whole output again."""
    return any(isinstance(step, Unchunk) and step.empty_when_zero_runs for step in result.after)


@dataclass(frozen=True)
class EmptyWhenZeroRuns:
    """See `guard_zero_iterations`."""

    axis: int
    empty_shape: ov.Output | None
    phase: ClassVar[int] = 1

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        values = [value for value, _ in items]
        axes = [step.axis for _, step in items]
        return guard_zero_iterations(values, axes, [s.empty_shape for _, s in items], after.zero)


@dataclass(frozen=True)
class InitialWhenZeroRuns:
    """See `guard_last_values`."""

    initial: ov.Output
    phase: ClassVar[int] = 1

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        values = [value for value, _ in items]
        return guard_last_values(values, [step.initial for _, step in items], after.zero)


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
            reshaped = ops.reshape(cut, shape, False).output(0)
            cut = _keep_static_dims(reshaped, cut.get_partial_shape(), _dims_of(empty_shape))
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
    reshaped = ops.reshape(picked, shape, False).output(0)
    return _keep_static_dims(reshaped, start.get_partial_shape(), output.get_partial_shape())


def _dims_of(shape: ov.Output) -> ov.PartialShape | None:
    """The shape a shape vector states, when it is known before run time."""
    known = ovgraph.folded_value(shape)
    return None if known is None else ov.PartialShape([int(d) for d in known.reshape(-1)])


def _keep_static_dims(
    value: ov.Output, first: ov.PartialShape, second: ov.PartialShape | None
) -> ov.Output:
    """`value` (a reshape to a run-time shape that is `first` or `second`, so all its dims
    are dynamic to OpenVINO) declared with the static dims both share: a Reshape with
    special_zero copies every other dim, and at run time changes nothing. Without it a carried
    value [?,8] guarded in an inner loop returns [?,?], and the outer loop's carried type
    relaxes to [?,?] (then BranchZeroRunsOfReshapedCarries puts the inner loop in an If); a stacked
    output [?,?,8] of a loop that may run zero times came out [?,?,?]."""
    if second is None or first.rank.is_dynamic or first.rank != second.rank:
        return value
    common = [
        mine.get_length() if mine.is_static and mine == theirs else 0
        for mine, theirs in zip(first, second)
    ]
    if not any(common):
        return value
    return ops.reshape(value, ops.constant(np.array(common, np.int64)), True).output(0)
