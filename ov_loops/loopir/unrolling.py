"""Unrolling a LoopIR: k copies of its body chained in one iteration (`UnrolledBody`, as `Plan`
says) and the conditions under which it can be (`unrollable`, `shapes_kept`); the post-loop
step that cuts stacked outputs back to the copies that ran, `Unchunk`, is in loopir/steps.py
(the zero-run guards read it at every level). The pass that unrolls loops partially
(loopir/passes/unroll_iterations.py) and the lowering that unrolls them fully (lower/unroll.py),
and the split of lower/remainder.py, all build on it; the semantics are UnrollIterations'."""

from __future__ import annotations

import dataclasses

import numpy as np
import openvino as ov

from ov_loops.contract.ports import UNNUMBERED, renumbered
from ov_loops.contract.spec import (
    TRIP_COUNT_CONSTANT,
    TRIP_COUNT_INPUT,
    TRIP_COUNT_UNBOUNDED,
    InvariantInput,
    LastValueOutput,
    SlicedInput,
)
from ov_loops.loopir.analysis import computes_from_constants
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.plugin_limits import MAX_PORT_RANK
from ov_loops.loopir.steps import Unchunk
from ov_loops.loopir.trip_count import INT32_MAX, TripCount
from ov_loops.opfactory import constant, op
from ov_loops.ovgraph import constant_value, empty_shape, length, twin
from ov_loops.record import Record

STRUCTURAL = {"Parameter", "Result", "Constant"}
SUBGRAPH_OPS = {"Loop", "TensorIterator", "If"}


def unrollable(loop: LoopIR) -> bool:
    """The conditions of UnrollIterations' docstring that do not depend on masking, and a loop
    not computed from Constants alone: OpenVINO folds that one whole, and unrolled (with
    `Unchunk`'s VariadicSplit) its evaluation failed ("get_partial_shape().same_scheme" in
    tensor.cpp)."""
    if any(node.get_type_name() in SUBGRAPH_OPS for node in loop.body.get_ordered_ops()):
        return False
    if computes_from_constants(loop):
        return False
    spec = loop.spec
    stacked = [entry.body_result for entry in spec.concatenated_outputs]
    read = [entry.body_result for entry in (*spec.merged_inputs, *spec.last_value_outputs)]
    if len(set(stacked)) < len(stacked) or set(stacked) & set(read):
        return False
    if any(_rank(loop.body_value(index)) >= MAX_PORT_RANK for index in stacked):
        return False
    # A stacked Result reading a body Parameter itself (an invariant moved out of the body by
    # HoistInvariantComputation) came out one part long unrolled: left alone.
    if any(loop.body_value(index).get_node().get_type_name() == "Parameter" for index in stacked):
        return False
    return all(
        (_forward(entry) or _backward(entry))
        and loop.outer[entry.external_port].get_partial_shape().rank.is_static
        for entry in spec.sliced_inputs
    )


def _rank(value: ov.Output) -> int:
    rank = value.get_partial_shape().rank
    return MAX_PORT_RANK + 1 if rank.is_dynamic else rank.get_length()


def _forward(entry: SlicedInput) -> bool:
    return (entry.start, entry.stride, entry.part_size, entry.end) == (0, 1, 1, -1)


def _backward(entry: SlicedInput) -> bool:
    return (entry.start, entry.stride, entry.part_size, entry.end) == (-1, -1, 1, 0)


def shapes_kept(loop: LoopIR) -> bool:
    """Whether every value in the body has a static shape and every carried value leaves with
    the shape it entered with. A masked copy runs on values no iteration of the loop sees (one
    iteration past a false condition, zeros of the padding): with static shapes it cannot fail
    on a shape (reshaping an empty slice past an input's end), and its Select and the Concat
    of parts get the shapes every copy has.

    (Dynamic dims that OpenVINO's shape-inference symbols called kept were not enough: ONNX's
    test_loop11 slices x[i:i+1], empty past x's end, and the masked copies' parts had another
    shape than the running ones.)"""
    for node in loop.body.get_ordered_ops():
        if any(not output.get_partial_shape().is_static for output in node.outputs()):
            return False
    return carried_shapes_kept(loop)


def carried_shapes_kept(loop: LoopIR) -> bool:
    """Whether every carried value's body Result declares the shape its Parameter does."""
    parameters = loop.body.get_parameters()
    return all(
        parameters[merged.body_parameter].get_partial_shape()
        == loop.body_value(merged.body_result).get_partial_shape()
        for merged in loop.spec.merged_inputs
    )


def always_true(value: ov.Output) -> bool:
    """Whether `value` is a Constant whose elements are all true."""
    known = constant_value(value)
    return known is not None and bool(np.all(known))


class Plan(Record):
    """How a loop is unrolled: `factor` copies; whether copies past the trip count (`limited`)
    or after a false condition (`conditional`) must be masked."""

    __slots__ = ("factor", "limited", "conditional", "counted")

    def __init__(self, factor: int, limited: bool, conditional: bool, counted: bool) -> None:
        self.factor = factor
        self.limited = limited
        self.conditional = conditional
        self.counted = counted

    @classmethod
    def of(cls, loop: LoopIR, factor: int) -> Plan:
        """`counted`: the number of copies that ran leaves the Loop (stacked outputs are cut to
        it), unless it is the constant trip count."""
        count = loop.trip.constant
        known = loop.trip.multiple_of if count is None else count
        limited = loop.trip.source != TRIP_COUNT_UNBOUNDED and known % factor != 0
        conditional = not always_true(loop.body_value(loop.spec.execution_condition))
        stacked = bool(loop.spec.concatenated_outputs)
        counted = stacked and (conditional or (limited and count is None))
        return cls(factor, limited, conditional, counted)

    @property
    def masked(self) -> bool:
        return self.limited or self.conditional

    @property
    def masking(self) -> str | None:
        """What the report says of the masks (None: no mask)."""
        if not self.masked:
            return None
        past = " and ".join(
            what
            for what, needed in (
                ("the trip count", self.limited),
                ("a false condition", self.conditional),
            )
            if needed
        )
        return f"copies past {past} masked"


def _i64(*values: int) -> ov.Output:
    return constant(values, np.int64)


class UnrolledBody:
    """The LoopIR of `loop` unrolled as `plan` says (see UnrollIterations)."""

    def __init__(self, loop: LoopIR, plan: Plan) -> None:
        self.source, self.plan, self.spec = loop, plan, loop.spec
        old = loop.body.get_parameters()
        self.parameters = [_like(parameter) for parameter in old]
        for entry in self.spec.sliced_inputs:
            self.parameters[entry.body_parameter] = _chunk_parameter(old, entry, plan.factor)
        self.iteration = None
        if plan.masked or self.spec.current_iteration is not None:
            self.iteration = ov.op.Parameter(ov.Type.i64, ov.PartialShape([]))
            if self.spec.current_iteration is None:
                self.parameters.append(self.iteration)
            else:
                self.parameters[self.spec.current_iteration] = self.iteration
        self.limit = self._limit()
        self.first = self._first()
        self.remaining = self._remaining()

    def _first(self) -> ov.Output | None:
        """i*k, the iteration the chunk's first copy runs (computed once per chunk)."""
        if self.iteration is None:
            return None
        return op("Multiply", self.iteration, _scalar_i64(self.plan.factor)).output(0)

    def _remaining(self) -> ov.Output | None:
        """n - i*k, the iterations left for this chunk: copy j runs iff j < n - i*k (one
        scalar Subtract per chunk, then one Less per copy, instead of i*k + j < n)."""
        if self.limit is None:
            return None
        return op("Subtract", self.limit, self.first).output(0)

    def _limit(self) -> ov.Output | None:
        """The trip count as the body compares with it, when copies past it are masked."""
        if not self.plan.limited:
            return None
        if self.source.trip.constant is not None:
            return _scalar_i64(self.source.trip.constant)
        limit = ov.op.Parameter(ov.Type.i64, ov.PartialShape([]))
        self.parameters.append(limit)
        return limit.output(0)

    def loop(self) -> LoopIR:
        """The unrolled LoopIR."""
        finals, parts, condition, count = self._chain()
        spec = self.spec
        results = [ov.op.Result(value) for value in finals]
        for entry in spec.concatenated_outputs:
            axis = _i64(entry.axis + 1)
            each = [op("Unsqueeze", part, axis) for part in parts[entry.body_result]]
            stacked = op("Concat", *each, axis=entry.axis + 1)
            results[entry.body_result] = ov.op.Result(stacked.output(0))
        inputs, outputs = spec.inputs(), spec.outputs()
        if self.limit is not None and self.source.trip.constant is None:
            inputs.append(InvariantInput(UNNUMBERED, len(self.parameters) - 1))
        if self.plan.counted:
            outputs.append(LastValueOutput(UNNUMBERED, len(results)))
            results.append(ov.op.Result(count))
        read = {e.body_result for e in (*spec.merged_inputs, *spec.outputs())}
        position = spec.execution_condition
        if position in read:
            position = len(results)
            results.append(ov.op.Result(condition))
        else:
            results[position] = ov.op.Result(condition)
        trip = self._trip()
        new_spec = dataclasses.replace(
            renumbered(spec, inputs, outputs),
            trip_count=trip.constant if trip.source == TRIP_COUNT_CONSTANT else None,
            current_iteration=self._iteration_index(),
            execution_condition=position,
        )
        unrolled = self.source.with_body(results, self.parameters, new_spec)
        count_port = len(spec.outputs()) if self.plan.counted else None
        return unrolled.replace(
            trip=trip,
            outer=self._outer(new_spec),
            results=self._results(count_port),
            iterations_per_step=self.source.iterations_per_step * self.plan.factor,
        )

    def _chain(self) -> tuple[list[ov.Output], dict, ov.Output, ov.Output | None]:
        """The k copies: each Result's value after the last active copy, the per-copy parts
        of each stacked Result, the Loop's condition and the count of copies that ran."""
        body, factor = self.source.body, self.plan.factor
        originals = body.get_ordered_ops()
        pieces = {
            e.body_parameter: _pieces(self.parameters[e.body_parameter], e, factor)
            for e in self.spec.sliced_inputs
        }
        parts = {entry.body_result: [] for entry in self.spec.concatenated_outputs}
        finals, active, condition, count = None, None, None, None
        for copy in range(factor):
            current = self._current(copy)
            if copy > 0:
                active = self._active(active, condition, copy)
            feeds = self._feeds(copy, current, pieces, finals)
            values = _copy(body, originals, feeds, copy)
            finals = (
                values
                if finals is None
                else [_keep(active, value, final) for value, final in zip(values, finals)]
            )
            for index, stack in parts.items():
                stack.append(values[index])
            if self.plan.counted and self.plan.conditional:
                ran = op("Add", current, _scalar_i64(1)).output(0)
                count = _keep(active, ran, count)
            condition = _scalar(values[self.spec.execution_condition])
        if self.plan.counted and not self.plan.conditional:
            # without a condition the copies that ran are the first min(n - i*k, k)
            end = op("Add", self.first, _scalar_i64(factor))
            count = op("Minimum", end, self.limit).output(0)
        return finals, parts, _both(active, condition), count

    def _current(self, copy: int) -> ov.Output | None:
        """i*k + copy, the iteration copy `copy` runs (None without an iteration Parameter)."""
        if self.first is None:
            return None
        if copy == 0:
            return self.first
        return op("Add", self.first, _scalar_i64(copy)).output(0)

    def _clamped(self, current: ov.Output) -> ov.Output:
        """The iteration number a copy sees: at most n - 1, so a copy masked for being past the
        trip count reads inputs at an index the loop reads (OpenVINO's CPU plugin reads zeros
        past an input's end, the IR reference refuses such an index)."""
        if self.limit is None:
            return current
        last = op("Subtract", self.limit, _scalar_i64(1))
        return op("Minimum", current, last).output(0)

    def _active(self, active, condition, copy: int) -> ov.Output | None:
        """Whether a copy runs: the one before it ran and its condition held, and it is below n
        (which alone says the copies before it ran, when no condition stops the loop)."""
        below = None
        if self.remaining is not None:
            below = op("Less", _scalar_i64(copy), self.remaining).output(0)
        if not self.plan.conditional:
            return below
        return _both(_both(active, condition), below)

    def _feeds(self, copy: int, current, pieces: dict, finals) -> dict[int, ov.Output]:
        """What each body Parameter of copy `copy` receives."""
        spec = self.spec
        feeds = {index: parameter.output(0) for index, parameter in enumerate(self.parameters)}
        for index, parts in pieces.items():
            feeds[index] = parts[copy]
        if finals is not None:
            for merged in spec.merged_inputs:
                feeds[merged.body_parameter] = finals[merged.body_result]
        if spec.current_iteration is not None:
            old = self.source.body.get_parameters()[spec.current_iteration]
            feeds[spec.current_iteration] = _as_type_of(self._clamped(current), old)
        return feeds

    def _iteration_index(self) -> int | None:
        if self.iteration is None:
            return None
        return next(i for i, p in enumerate(self.parameters) if p is self.iteration)

    def _trip(self) -> TripCount:
        """ceil(n / k) Loop-5 iterations (-1 stays unbounded)."""
        trip, factor = self.source.trip, self.plan.factor
        if trip.constant is not None:
            chunks = -(-trip.constant // factor)
            return TripCount(_scalar_i64(chunks), TRIP_COUNT_CONSTANT, chunks, False)
        if trip.source == TRIP_COUNT_UNBOUNDED:
            return trip
        count = trip.value
        chunks = op("Divide", op("Add", count, _scalar_i64(factor - 1)), _scalar_i64(factor))
        value = op("Select", _unbounded(count), _scalar_i64(-1), chunks).output(0)
        return TripCount(value, TRIP_COUNT_INPUT, None, True)

    def _outer(self, spec) -> dict[int, ov.Output]:
        """The outer values: sliced inputs read in chunks of k, then the trip count the body
        compares with (n, or INT32_MAX for unbounded: the CPU plugin compares in i32)."""
        outer = dict(self.source.outer)
        for entry in self.spec.sliced_inputs:
            value = outer[entry.external_port]
            outer[entry.external_port] = chunked(
                value, entry.axis, self.plan.factor, _backward(entry)
            )
        if len(spec.inputs()) > len(self.spec.inputs()):
            count = self.source.trip.value
            limit = op("Select", _unbounded(count), _scalar_i64(INT32_MAX), count)
            outer[spec.inputs()[-1].external_port] = limit.output(0)
        return outer

    def _results(self, count_port: int | None) -> tuple[LoopResult, ...]:
        """The loop's results, stacked ones cut to the copies that ran."""
        plan, trip = self.plan, self.source.trip
        axes = {e.external_port: e.axis for e in self.spec.concatenated_outputs}
        bodies = {e.external_port: e.body_result for e in self.spec.concatenated_outputs}
        results = []
        for result in self.source.results:
            if result.port in axes:
                constant = trip.constant if plan.masked and not plan.counted else None
                result = result.with_step(Unchunk(axes[result.port], constant, count_port))
                if result.empty_shape is None:
                    shape = empty_shape(
                        self.source.body_value(bodies[result.port]), axes[result.port]
                    )
                    result = result.replace(empty_shape=shape)
            results.append(result)
        return tuple(results)


def _scalar_i64(value: int) -> ov.Output:
    return constant(value, np.int64)


def _keep(active: ov.Output | None, value: ov.Output, previous: ov.Output | None) -> ov.Output:
    """`value` if the copy was `active` (None: always), else `previous`."""
    if active is None or previous is None or value == previous:
        return value
    return op("Select", active, value, previous).output(0)


def _both(first: ov.Output | None, second: ov.Output | None) -> ov.Output | None:
    """first and second, either of which may be None (true)."""
    if first is None or second is None:
        return second if first is None else first
    return op("LogicalAnd", first, second).output(0)


def _scalar(value: ov.Output) -> ov.Output:
    """A boolean of shape [] from one of one element."""
    rank = value.get_partial_shape().rank
    if rank.is_static and rank.get_length() == 0:
        return value
    return op("Reshape", value, _i64(), special_zero=False).output(0)


def _as_type_of(value: ov.Output, parameter: ov.Node) -> ov.Output:
    """The iteration number in the element type and rank the body's Parameter declares (a
    scalar when its rank is dynamic)."""
    if parameter.get_element_type() != value.get_element_type():
        value = op("Convert", value, destination_type=parameter.get_element_type()).output(0)
    rank = parameter.get_partial_shape().rank
    if rank.is_static and rank.get_length() > 0:
        value = op("Reshape", value, _i64(*[1] * rank.get_length()), special_zero=False)
        value = value.output(0)
    return value


def _like(parameter: ov.Node) -> ov.Node:
    """A new Parameter with the type, shape and names of `parameter`."""
    new = ov.op.Parameter(parameter.get_element_type(), parameter.get_partial_shape())
    new.set_friendly_name(parameter.get_friendly_name())
    new.output(0).set_names(parameter.output(0).get_names())
    return new


def _chunk_parameter(old: list, entry: SlicedInput, factor: int) -> ov.Node:
    """A Parameter for k parts of a sliced input: the part's shape with k after the axis."""
    parameter = old[entry.body_parameter]
    dims = list(parameter.get_partial_shape())
    dims.insert(entry.axis + 1, ov.Dimension(factor))
    return ov.op.Parameter(parameter.get_element_type(), ov.PartialShape(dims))


def _pieces(chunk: ov.Node, entry: SlicedInput, factor: int) -> list[ov.Output]:
    """The k parts of a chunk, in the order the copies read them (from its end backward)."""
    axis = constant(entry.axis + 1, np.int64)
    split = op("Split", chunk, axis, num_splits=factor)
    parts = [op("Squeeze", split.output(j), axis).output(0) for j in range(factor)]
    return parts[::-1] if _backward(entry) else parts


def chunked(value: ov.Output, axis: int, factor: int, backward: bool) -> ov.Output:
    """`value` padded with zeros along `axis` (at the end, or at the front when read backward)
    to a multiple of `factor`, then reshaped so `axis` counts chunks of `factor` parts::

        chunks = ceil(size / k);  pad = max(chunks * k - size, 0)

    Not pad = (k - size % k) % k: OpenVINO (2026.4.1) bounds a FloorMod as if it grew with its
    input, so for a size bounded in [0, 15] (an input cut to a Scan-8 entry's sequence length)
    that pad got the bounds [0, 1], the CPU plugin sized the zeros by them and failed every run
    with a pad above 1 ("Can not clone with new dims", issue 20). The max (a no-op) gives the
    Subtract the lower bound 0 OpenVINO requires of a shape."""
    rank = value.get_partial_shape().rank.get_length()
    shape = op("ShapeOf", value, output_type="i64")
    before = op("Slice", shape, _i64(0), _i64(axis), _i64(1))
    after = op("Slice", shape, _i64(axis + 1), _i64(rank), _i64(1))
    size = op("Unsqueeze", length(value, axis), _i64(0))
    k = _i64(factor)
    chunks = op("Divide", op("Add", size, _i64(factor - 1)), k)
    static = value.get_partial_shape()[axis]
    if static.is_dynamic or static.get_length() % factor != 0:
        pad = op("Maximum", op("Subtract", op("Multiply", chunks, k), size), _i64(0))
        zero = constant(np.zeros((), value.get_element_type().to_dtype()))
        zeros = op("Broadcast", zero, op("Concat", before, pad, after, axis=0), mode="NUMPY")
        pair = (zeros, value) if backward else (value, zeros)
        value = op("Concat", *pair, axis=axis).output(0)
    shape = op("Concat", before, chunks, k, after, axis=0)
    return op("Reshape", value, shape, special_zero=False).output(0)


def _copy(body: ov.Model, originals: list, feeds: dict[int, ov.Output], copy: int) -> list:
    """The values of the body's Results in a copy of the body whose Parameters are `feeds`
    (by index); `originals` are the body's ordered ops. Constants are shared with `body`;
    copies after the first get their own names."""
    clone = body.clone()
    for original, cloned in zip(originals, clone.get_ordered_ops()):
        if cloned.get_type_name() == "Constant":
            cloned.output(0).replace(original.output(0))
        elif copy > 0 and cloned.get_type_name() not in STRUCTURAL:
            cloned.set_friendly_name(f"{original.get_friendly_name()}/unrolled{copy}")
            for output in cloned.outputs():
                output.set_names(set())
    for index, parameter in enumerate(clone.get_parameters()):
        parameter.output(0).replace(feeds[index])
    return [result.input_value(0) for result in clone.get_results()]


def _unbounded(count: ov.Output) -> ov.Output:
    """count < 0 (an unbounded trip count), computed once per count (`ovgraph.twin`)."""
    less = op("Less", count, _scalar_i64(0))
    return (twin(less) or less).output(0)
