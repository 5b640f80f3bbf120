"""Post-loop steps: what happens to a Loop-5 output before the graph reads it.

A LoopResult lists its steps in phase order. The lowering applies them phase by phase; within a
phase the steps of one kind are applied together (`apply_all`), so they may share constants as
one call. Passes that add steps define them next to themselves (zero_run_guards, port_rank); the
frontends' own step is `Reverse`. `Unchunk` (loopir/unrolling.py's) is here: the zero-run
guards read it at every level, and unrolling, at level max or on targets that unroll alone, is
imported only then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np
import openvino as ov

from ov_loops import ovgraph
from ov_loops.loopir.trip_count import InitialCondition, TripCount, runs_zero
from ov_loops.opfactory import constant, op
from ov_loops.record import Record

if TYPE_CHECKING:
    from ov_loops.loopir.loop import LoopResult


class AfterLoop(Record):
    """What post-loop steps may read: the Loop's outputs by port and whether it ran zero times."""

    __slots__ = ("outputs", "trip", "start", "__dict__")  # __dict__: `zero` is cached

    def __init__(self, outputs: list[ov.Output], trip: TripCount, start: InitialCondition) -> None:
        self.outputs = outputs
        self.trip = trip
        self.start = start

    @cached_property
    def zero(self) -> ov.Output | None:
        """True when the loop ran no iteration (None when that is not a runtime question)."""
        return self.shared("zero", lambda: runs_zero(self.trip, self.start))

    def shared(self, what: str, build: Callable[[], ov.Output | None]) -> ov.Output | None:
        """`build()` (a value computed from `zero` and constants alone), once per trip count
        when only the count decides whether the loop runs (`TripCount.built`), else anew."""
        return build() if self.start.runtime else self.trip.built(what, build)


class Step(Protocol):
    """One post-loop step. `phase` orders steps of a result (lower first)."""

    phase: ClassVar[int]

    @classmethod
    def apply_all(cls, items: list[tuple[ov.Output, Step]], after: AfterLoop) -> list[ov.Output]:
        """Apply these steps (all of this class) to their values; return the new values."""


class Reverse(Record):
    """Reverse the value along `axis` (a Scan output that prepends: ONNX Scan's direction 1)::

    value = value[::-1] along axis
    """

    __slots__ = ("axis",)

    def __init__(self, axis: int) -> None:
        self.axis = axis

    phase: ClassVar[int] = 2

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        return [ovgraph.reverse(value, step.axis) for value, step in items]


def apply_steps(results: Sequence[LoopResult], after: AfterLoop) -> list[ov.Output]:
    """Each result's Loop output after its steps: phase by phase, the steps of one kind in a
    phase applied together."""
    values = [after.outputs[result.port] for result in results]
    phases = sorted({step.phase for result in results for step in result.after})
    for phase in phases:
        kinds: dict[type, list[tuple[int, Step]]] = {}
        for index, result in enumerate(results):
            for step in result.after:
                if step.phase == phase:
                    kinds.setdefault(type(step), []).append((index, step))
        for kind, members in kinds.items():
            done = kind.apply_all([(values[index], step) for index, step in members], after)
            for (index, _), value in zip(members, done):
                values[index] = value
    return values


class PrependInitial(Record):
    """The initial value of an accumulator before its parts, stacked with axes of their own
    when each has `rows` > 1 (passes/accumulators.py)::

        value = concat(initial, value if rows == 1 else merge axes axis, axis + 1 of value, axis)
    """

    __slots__ = ("initial", "axis", "rows")

    def __init__(self, initial: ov.Output, axis: int, rows: int = 1) -> None:
        self.initial = initial
        self.axis = axis
        self.rows = rows

    phase: ClassVar[int] = 2

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        return [
            op("Concat", step.initial, _merged(value, step), axis=step.axis).output(0)
            for value, step in items
        ]


def _merged(value: ov.Output, step: PrependInitial) -> ov.Output:
    """A stack [.., count, rows, ..] as [.., count * rows, ..] (itself when rows is 1)."""
    if step.rows == 1:
        return value
    axis, rank = step.axis, value.get_partial_shape().rank.get_length()
    dims = op("ShapeOf", value, output_type="i64")
    rows = op("Gather", dims, constant([axis], np.int64), constant(0, np.int64), batch_dims=0)
    count = op("Multiply", rows, constant([step.rows], np.int64))
    order = [*range(axis), rank, *range(axis + 2, rank)]
    gathered = (op("Concat", dims, count, axis=0), constant(order, np.int64), constant(0, np.int64))
    shape = op("Gather", *gathered, batch_dims=0)
    return op("Reshape", value, shape, special_zero=False).output(0)


class Unchunk(Record):
    """A stacked output the Loop gathered as [..., chunks, k, ...] (chunks at `axis`): its
    parts in one axis, and only the first `count` of them when copies were masked (`count` a
    constant, or the value of Loop output `count_port`, clamped to the parts there are, and 0
    when the loop ran no iteration: the CPU plugin's outputs are stale then, zero_run_guards.py)::

        value = value.reshape(..., chunks * k, ...)[:count] along axis
    """

    __slots__ = ("axis", "count", "count_port")

    def __init__(self, axis: int, count: int | None, count_port: int | None) -> None:
        self.axis = axis
        self.count = count
        self.count_port = count_port

    phase: ClassVar[int] = 0

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        return [step.unchunk(value, after) for value, step in items]

    @property
    def empty_when_zero_runs(self) -> bool:
        """Whether the output is already empty after a run of no iteration."""
        return self.count_port is not None

    def unchunk(self, value: ov.Output, after: AfterLoop) -> ov.Output:
        target, size = self._merged_shape(value)
        value = op("Reshape", value, target, special_zero=False).output(0)
        if self.count is None and self.count_port is None:
            return value
        if self.count_port is None:
            kept = _i64(self.count)
        else:
            counted = op("Reshape", after.outputs[self.count_port], _i64(1), special_zero=False)
            kept = op("Maximum", op("Minimum", counted, size), _i64(0))
            if after.zero is not None:
                kept = op("Select", after.zero, _i64(0), kept)
        lengths = op("Concat", kept, op("Subtract", size, kept), axis=0)
        axis = constant(self.axis, np.int64)
        return op("VariadicSplit", value, axis, lengths).output(0)

    def _merged_shape(self, value: ov.Output) -> tuple[ov.Output, ov.Output]:
        """The shape of `value` with dims `axis` and `axis + 1` merged, and the merged dim
        ([1] each). Constants for a static shape: the CPU plugin computes a Reshape of a
        zero-element tensor to a ShapeOf-derived shape wrongly (refuses it, or fills the
        output with stale data, OpenVINO 2026.4)."""
        axis, shape = self.axis, value.get_partial_shape()
        if shape.is_static:
            dims = [d.get_length() for d in shape]
            merged = dims[axis] * dims[axis + 1]
            return _i64(*dims[:axis], merged, *dims[axis + 2 :]), _i64(merged)
        rank = shape.rank.get_length()
        shape_of = op("ShapeOf", value, output_type="i64")
        before = op("Slice", shape_of, _i64(0), _i64(axis), _i64(1))
        size = op(
            "ReduceProd",
            op("Slice", shape_of, _i64(axis), _i64(axis + 2), _i64(1)),
            _i64(0),
            keep_dims=True,
        )
        rest = op("Slice", shape_of, _i64(axis + 2), _i64(rank), _i64(1))
        return op("Concat", before, size, rest, axis=0).output(0), size.output(0)


def _i64(*values: int) -> ov.Output:
    return constant(values, np.int64)
