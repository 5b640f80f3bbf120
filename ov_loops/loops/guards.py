"""Guards for OpenVINO runtime pitfalls around a Loop's trip count and initial condition.

See ../shared/notes/openvino-loop5.md: the CPU plugin truncates i64 trip counts to i32, crashes or
returns wrong shapes when a Loop provably runs zero times, and returns a stale concatenated output
when a run with zero iterations follows a run with some.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.errors import ConversionError
from ov_loops.loops.spec import TRIP_COUNT_CONSTANT, TRIP_COUNT_INPUT, TRIP_COUNT_UNBOUNDED

INT32_MAX = 2**31 - 1


def is_constant(value: ov.Output) -> bool:
    """Whether `value` comes straight from a Constant."""
    return value.get_node().get_type_name() == "Constant"


def constant_value(value: ov.Output) -> np.ndarray | None:
    """The value of `value` when it comes straight from a Constant, else None."""
    return np.asarray(value.get_node().get_data()) if is_constant(value) else None


def _scalar(value: ov.Output, element_type: ov.Type) -> ov.Output:
    if value.get_element_type() != element_type:
        value = ops.convert(value, element_type).output(0)
    shape = value.get_partial_shape()
    if shape.rank.is_static and shape.rank.get_length() == 0:
        return value
    return ops.reshape(value, ops.constant(np.array([], np.int64)), False).output(0)


@dataclass(frozen=True)
class TripCount:
    """What the Loop receives as trip count, where it came from, and whether it may be zero."""

    value: ov.Output
    source: str
    constant: int | None
    runtime: bool

    @property
    def proven_zero(self) -> bool:
        return self.constant == 0


def trip_count(
    value: ov.Output | None,
    sliced: list[ov.Output] = (),
    axes: list[int] = (),
    must_agree: bool = False,
    what: str = "",
) -> TripCount:
    """Map an ONNX `M` to a Loop-5 trip count, bounded by the sliced inputs' lengths.

    Absent or >= 2**31-1 -> -1 (unbounded: the CPU plugin would truncate it to i32);
    negative -> 0 (onnxruntime runs no iteration). Constants are mapped here, runtime values
    by a Select in the graph. A Loop does not stop at the end of a sliced input by itself, so
    the count is capped at the shortest one; when the lengths `must_agree` (Scan), differing
    static lengths are an error and at run time the longest is used, so that a shorter input
    makes the Loop fail rather than silently drop iterations.
    """
    trip = _onnx_trip_count(value)
    if not sliced:
        return trip
    static = [_static_length(value, axis) for value, axis in zip(sliced, axes)]
    known = [size for size in static if size is not None]
    if must_agree and len(set(known)) > 1:
        raise ConversionError(f"{what}: scan inputs differ in length along their axes: {known}")
    if None not in static and trip.source != TRIP_COUNT_INPUT:
        count = min(static) if trip.constant is None else min(min(static), trip.constant)
        return TripCount(ops.constant(np.int64(count)).output(0), TRIP_COUNT_CONSTANT, count, False)
    lengths = [length(value, axis) for value, axis in zip(sliced, axes)]
    combine = ops.maximum if must_agree else ops.minimum
    span = lengths[0]
    for other in lengths[1:]:
        span = combine(span, other)
    if trip.source == TRIP_COUNT_UNBOUNDED:
        bounded = span
    elif trip.source == TRIP_COUNT_CONSTANT:
        bounded = ops.minimum(span, trip.value)
    else:  # runtime and already guarded: -1 means unbounded
        unbounded = ops.less(trip.value, ops.constant(np.int64(0)))
        bounded = ops.select(unbounded, span, ops.minimum(span, trip.value))
    return TripCount(bounded.output(0), TRIP_COUNT_INPUT, None, True)


def length(value: ov.Output, axis: int) -> ov.Node:
    """value.shape[axis] as an i64 scalar."""
    index = ops.constant(np.array([axis], np.int64))
    zero = ops.constant(np.array([0], np.int64))
    return ops.squeeze(ops.gather(ops.shape_of(value, ov.Type.i64), index, zero), zero)


def _static_length(value: ov.Output, axis: int) -> int | None:
    shape = value.get_partial_shape()
    if shape.rank.is_dynamic or axis >= shape.rank.get_length() or shape[axis].is_dynamic:
        return None
    return shape[axis].get_length()


def _onnx_trip_count(value: ov.Output | None) -> TripCount:
    if value is None:
        return TripCount(ops.constant(np.int64(-1)).output(0), TRIP_COUNT_UNBOUNDED, None, False)
    known = constant_value(value)
    if known is not None and known.size == 1:
        count = int(known.reshape(-1)[0])
        if count >= INT32_MAX:
            return TripCount(
                ops.constant(np.int64(-1)).output(0), TRIP_COUNT_UNBOUNDED, None, False
            )
        count = max(count, 0)
        return TripCount(ops.constant(np.int64(count)).output(0), TRIP_COUNT_CONSTANT, count, False)
    count = _scalar(value, ov.Type.i64)
    # Decide in f32: the CPU plugin compares i64 values as truncated i32 (2**32+3 -> 3), but a
    # Convert reads the full i64. f32(2**31-1) rounds up to 2**31, so ">= 2**31" covers it.
    as_float = ops.convert(count, ov.Type.f32)
    too_big = ops.greater_equal(as_float, ops.constant(np.float32(2.0**31)))
    not_positive = ops.less_equal(as_float, ops.constant(np.float32(0.0)))
    clamped = ops.select(not_positive, ops.constant(np.int64(0)), count)
    guarded = ops.select(too_big, ops.constant(np.int64(-1)), clamped).output(0)
    return TripCount(guarded, TRIP_COUNT_INPUT, None, True)


@dataclass(frozen=True)
class InitialCondition:
    """What the Loop receives as initial execution condition."""

    value: ov.Output
    constant: bool | None
    runtime: bool


def initial_condition(value: ov.Output | None) -> InitialCondition:
    """An omitted ONNX `cond` starts true; constants are recognised so a false one can be folded."""
    if value is None:
        return InitialCondition(ops.constant(True).output(0), True, False)
    known = constant_value(value)
    if known is not None and known.size == 1:
        flag = bool(known.reshape(-1)[0])
        return InitialCondition(ops.constant(flag).output(0), flag, False)
    return InitialCondition(_scalar(value, ov.Type.boolean), None, True)


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
        if empty_shape is not None and _dynamic_besides(output, axis):
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


def _dynamic_besides(value: ov.Output, axis: int) -> bool:
    shape = value.get_partial_shape()
    return shape.rank.is_dynamic or any(
        dim.is_dynamic for index, dim in enumerate(shape) if index != axis
    )


def empty_dims(per_iteration: ov.Output, axis: int) -> list[int] | None:
    """The shape of zero stacked iterations: the per-iteration shape with 0 inserted at `axis`.

    Dims the body does not fix statically are 0: without an iteration nothing determines them.
    None when the rank is unknown.
    """
    shape = per_iteration.get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    dims = [d.get_length() if d.is_static else 0 for d in shape]
    dims.insert(axis, 0)
    return dims


def empty_shape(per_iteration: ov.Output, axis: int) -> ov.Output | None:
    """`empty_dims` as a constant shape vector."""
    dims = empty_dims(per_iteration, axis)
    return None if dims is None else ops.constant(np.array(dims, np.int64)).output(0)


def empty_stack(per_iteration: ov.Output, axis: int) -> ov.Output:
    """The stacked output of zero iterations, shaped as `empty_dims` says ([0] for unknown rank)."""
    dims = empty_dims(per_iteration, axis) or [0]
    return ops.constant(np.zeros(dims, np.uint8), per_iteration.get_element_type()).output(0)


def reverse(value: ov.Output, axis: int) -> ov.Output:
    """`value` reversed along `axis` (a prepended scan output): a Slice with step -1 from the
    last element to -(length + 1), computed from the length (no INT64_MIN: see the notes on i32)."""
    minus_one = ops.constant(np.array([-1], np.int64))
    zero = ops.constant(np.array([0], np.int64))
    stop = ops.subtract(minus_one, ops.unsqueeze(length(value, axis), zero))
    axes = ops.constant(np.array([axis], np.int64))
    return ops.slice(value, minus_one, stop, minus_one, axes).output(0)


def passthrough(value: ov.Output) -> ov.Output:
    """`value` behind a node of its own (the frontend renames a returned input's tensor)."""
    return ops.convert(value, value.get_element_type()).output(0)


def copy(value: ov.Output) -> ov.Output:
    """A computed copy of `value` that the CPU plugin keeps (it optimises Identity, Convert,
    x*1, x+0, Broadcast, Gather and Slice copies into views).

    Every back edge gets one (CPU plugin, 2026.4.1): without it, a back edge whose value is a
    view of a sliced input received the *next* slice, and a small elementwise body such as
    acc + x_t * w computed wrong values (any extra op in the body hid the fault, so the
    plugin's in-place memory reuse is the suspect). One elementwise op per carried value and
    iteration.
    """
    if value.get_element_type() == ov.Type.boolean:
        return ops.logical_or(value, value).output(0)
    return ops.maximum(value, value).output(0)
