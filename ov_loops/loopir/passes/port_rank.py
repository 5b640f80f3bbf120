"""Pass: concatenated outputs whose Loop-5 port would pass rank 12 leave the body flattened."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.ports import UNNUMBERED, with_outputs
from ov_loops.contract.spec import LastValueOutput
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.plugin_limits import MAX_PORT_RANK
from ov_loops.loopir.steps import AfterLoop
from ov_loops.record import Record


class StackedPart(Record):
    """A per-iteration value stacked along `axis` that leaves the body flattened to [1, n] and
    is concatenated along 0; after the Loop it is reshaped (and transposed) back from its
    per-iteration `shape` (a constant) or, when dims are dynamic, from `body_shape`, a body value
    the Loop returns as an extra last-value output."""

    __slots__ = ("value", "axis", "shape", "body_shape")

    def __init__(
        self,
        value: ov.Output,
        axis: int,
        shape: ov.Output | None = None,
        body_shape: ov.Output | None = None,
    ) -> None:
        self.value = value
        self.axis = axis
        self.shape = shape
        self.body_shape = body_shape


def flattened_part(per_iteration: ov.Output, axis: int) -> StackedPart:
    """The flattened body value the Loop concatenates for `per_iteration` stacked along `axis`."""
    shape = per_iteration.get_partial_shape()
    flat = ops.reshape(per_iteration, ops.constant(np.array([1, -1], np.int64)), False).output(0)
    if shape.is_static:
        dims = np.array(list(shape.to_shape()), np.int64)
        return StackedPart(flat, axis, ops.constant(dims).output(0))
    return StackedPart(flat, axis, body_shape=ops.shape_of(per_iteration, ov.Type.i64).output(0))


class Unflatten(Record):
    """Restore a flattened concatenated output (see StackedPart); `shape_port` is the Loop
    output holding the per-iteration shape when it is not a constant::

        value = value.reshape(count, *shape) moved so the count is at part.axis
    """

    __slots__ = ("part", "shape_port")

    def __init__(self, part: StackedPart, shape_port: int | None) -> None:
        self.part = part
        self.shape_port = shape_port

    phase: ClassVar[int] = 0

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        return [
            _unflatten(
                step.part,
                value,
                None if step.shape_port is None else after.outputs[step.shape_port],
                after.zero,
            )
            for value, step in items
        ]


class FlattenHighRankStacks(LoopPass):
    """Each concatenated output whose per-iteration part has rank above MAX_PORT_RANK leaves the
    body as [1, n] (concatenated along 0) and is restored after the Loop (`Unflatten`)::

        for out in concatenated_outputs with rank(part) > 12:
            results[out] = reshape(per_iteration, [1, -1]); out.axis = 0
            [a last-value output of shape(per_iteration) when it is not static]

    New Results go before a trailing execution-condition Result.
    """

    name = "flatten-high-rank-stacks"

    def run(self, loop: LoopIR) -> LoopIR:
        results = list(loop.body.get_results())
        tall = [e for e in loop.spec.concatenated_outputs if _rank(loop, e) > MAX_PORT_RANK]
        if not tall:
            return loop
        spec, steps, shapes = loop.spec, {}, []
        for entry in tall:
            per_iteration = _per_iteration(loop.body_value(entry.body_result), entry.axis)
            part = flattened_part(per_iteration, entry.axis)
            results[entry.body_result] = ops.result(part.value)
            spec = _with_axis(spec, entry.external_port, 0)
            shape_port = None
            if part.body_shape is not None:
                shape_port = len(spec.outputs()) + len(shapes)
                shapes.append(ops.result(part.body_shape))
            steps[entry.external_port] = Unflatten(part, shape_port)
        spec = _with_shape_results(spec, results, shapes)
        outcome = [
            result.with_step(steps[result.port]) if result.port in steps else result
            for result in loop.results
        ]
        return loop.with_body(results, list(loop.body.get_parameters()), spec).replace(
            results=tuple(outcome)
        )


def _rank(loop: LoopIR, entry) -> int:
    shape = loop.body_value(entry.body_result).get_partial_shape()
    return -1 if shape.rank.is_dynamic else shape.rank.get_length()


def _per_iteration(part: ov.Output, axis: int) -> ov.Output:
    """The value a part was made from by adding the stacking axis: the Unsqueeze's input, or
    the part squeezed (when a pass before this one rewrote the Unsqueeze)."""
    node = part.get_node()
    if node.get_type_name() == "Unsqueeze":
        return node.input_value(0)
    return ops.squeeze(part, ops.constant(np.array([axis], np.int64))).output(0)


def _with_axis(spec, port: int, axis: int):
    concatenated = tuple(
        dataclasses.replace(entry, axis=axis) if entry.external_port == port else entry
        for entry in spec.concatenated_outputs
    )
    return dataclasses.replace(spec, concatenated_outputs=concatenated)


def _with_shape_results(spec, results: list, shapes: list):
    """Insert the `shapes` Results (before a trailing condition Result) and add a last-value
    output for each."""
    if not shapes:
        return spec
    position = len(results)
    if spec.execution_condition == len(results) - 1:
        position -= 1
        spec = dataclasses.replace(spec, execution_condition=position + len(shapes))
    results[position:position] = shapes
    added = [LastValueOutput(UNNUMBERED, position + k) for k in range(len(shapes))]
    return with_outputs(spec, added)


def _unflatten(
    part: StackedPart, output: ov.Output, body_shape: ov.Output | None, zero: ov.Output | None
) -> ov.Output:
    """One flattened concatenated output, reshaped (and transposed) back.

    `body_shape` holds the per-iteration shape when it is not a constant. After zero iterations
    (`zero`, see trip_count.runs_zero) it holds nothing meaningful and the concatenated output
    may be an earlier run's [count, n]: that is shaped [count, n, 1, ...] (the zero-iteration
    guard, zero_run_guards, then empties it).
    """
    first = ops.constant(np.array([0], np.int64))
    dims = ops.shape_of(output, ov.Type.i64)
    count = ops.gather(dims, first, first)
    shape = part.shape
    if shape is None:
        shape = body_shape
        if zero is not None:
            ones = np.ones(body_shape.get_partial_shape()[0].get_length() - 1, np.int64)
            size = ops.gather(dims, ops.constant(np.array([1], np.int64)), first)
            shape = ops.select(zero, ops.concat([size, ops.constant(ones)], 0), body_shape)
    stacked = ops.reshape(output, ops.concat([count, shape], 0), False).output(0)
    if part.axis == 0:
        return stacked
    rank = stacked.get_partial_shape().rank.get_length()
    order = [*range(1, part.axis + 1), 0, *range(part.axis + 1, rank)]
    return ops.transpose(stacked, ops.constant(np.array(order, np.int64))).output(0)
