"""Pass: outputs of a loop that may run zero times are guarded after it.

See ../shared/notes/openvino-loop5.md: the CPU plugin returns a stale concatenated output (and
stale last values) when a run with zero iterations follows a run with some.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import openvino as ov

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.steps import AfterLoop, Unchunk
from ov_loops.opfactory import constant, op
from ov_loops.ovgraph import dimensions, dynamic_besides
from ov_loops.record import Record


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


class EmptyWhenZeroRuns(Record):
    """See `guard_zero_iterations`."""

    __slots__ = ("axis", "empty_shape")

    def __init__(self, axis: int, empty_shape: ov.Output | None) -> None:
        self.axis = axis
        self.empty_shape = empty_shape

    phase: ClassVar[int] = 1

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        values = [value for value, _ in items]
        axes = [step.axis for _, step in items]
        shapes = [step.empty_shape for _, step in items]
        zero = after.zero
        if zero is None:
            return values
        lengths = after.shared("split lengths", lambda: _split_lengths(zero))
        return guard_zero_iterations(values, axes, shapes, zero, lengths)


class InitialWhenZeroRuns(Record):
    """See `guard_last_values`."""

    __slots__ = ("initial",)

    def __init__(self, initial: ov.Output) -> None:
        self.initial = initial

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
    lengths: ov.Output | None = None,
) -> list[ov.Output]:
    """Make concatenated outputs empty, with a deterministic shape, when the loop runs zero
    times (`zero`, from `runs_zero`)::

        value = split(value, axis, [0, -1] if zero else [-1, 0])[0]

    Without this, a zero-iteration run after a run with iterations returns the earlier run's
    data and shape. The output is split into (kept, dropped) parts on its axis, kept being 0 or
    all of it (VariadicSplit's -1: the rest), and, when other dims are dynamic (and so may be
    stale), reshaped to its entry of `empty_shapes` (when given). A split along the outermost
    axis runs in place on the CPU, a Slice copies (3% of an RNN Scan's time). The split
    lengths are one Select of two constants, shared by the loop's outputs (`lengths`, when
    built before): no length is read from a shape (and no large constant: the CPU plugin
    turned a stop of 2**31-1 into -2**31).
    """
    if zero is None or not outputs:
        return outputs
    if lengths is None:
        lengths = _split_lengths(zero)
    guarded = []
    for output, axis, empty_shape in zip(outputs, axes, empty_shapes):
        cut = op("VariadicSplit", output, constant(axis, np.int64), lengths).output(0)
        if empty_shape is not None and dynamic_besides(output, axis):
            shape = op("Select", zero, empty_shape, op("ShapeOf", cut, output_type="i64"))
            reshaped = op("Reshape", cut, shape, special_zero=False).output(0)
            cut = _keep_static_dims(reshaped, cut.get_partial_shape(), _dims_of(empty_shape))
        guarded.append(cut)
    return guarded


def _split_lengths(zero: ov.Output) -> ov.Output:
    """[0, -1] when `zero` holds, else [-1, 0]: a VariadicSplit's lengths keeping nothing or
    all. Shape [2] whatever `zero`'s rank: the CPU plugin cannot compile a VariadicSplit whose
    split lengths (or, through them, outputs) have a dynamic rank."""
    none, whole = constant([0, -1], np.int64), constant([-1, 0], np.int64)
    lengths = op("Select", zero, none, whole).output(0)
    if lengths.get_partial_shape() == ov.PartialShape([2]):
        return lengths
    return op("Reshape", lengths, constant([2], np.int64), special_zero=False).output(0)


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
            guarded.append(op("Select", zero, start, output).output(0))
        elif shape.rank.is_static and first.rank.is_static and shape.rank == first.rank:
            guarded.append(_pick_by_shape(zero, start, output))
        else:
            guarded.append(output)  # ranks differ: no shape-agnostic select in OpenVINO
    return guarded


def _pick_by_shape(zero: ov.Output, start: ov.Output, output: ov.Output) -> ov.Output:
    flat, none = constant([-1], np.int64), constant([0], np.int64)
    first = op("Reshape", start, flat, special_zero=False)
    last = op("Reshape", output, flat, special_zero=False)
    first_length = op("ShapeOf", first, output_type="i64")
    both = op("Concat", first, last, axis=0)
    begin = op("Select", zero, none, first_length)
    end = op("Select", zero, first_length, op("ShapeOf", both, output_type="i64"))
    picked = op("Slice", both, begin, end, constant([1], np.int64), none)
    shapes = (op("ShapeOf", value, output_type="i64") for value in (start, output))
    reshaped = op("Reshape", picked, op("Select", zero, *shapes), special_zero=False).output(0)
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
        for mine, theirs in zip(dimensions(first), dimensions(second))
    ]
    if not any(common):
        return value
    return op("Reshape", value, constant(common, np.int64), special_zero=True).output(0)
