"""A loop's trip count and initial condition as Loop-5 receives them.

See ../shared/notes/openvino-loop5.md: the CPU plugin truncates i64 trip counts to i32, so counts
of 2**31-1 and more become unbounded (-1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.spec import TRIP_COUNT_CONSTANT, TRIP_COUNT_INPUT, TRIP_COUNT_UNBOUNDED
from ov_loops.errors import ConversionError
from ov_loops.opfactory import constant, op
from ov_loops.ovgraph import folded_value, length, twin
from ov_loops.record import Record

INT32_MAX = 2**31 - 1


def _scalar(value: ov.Output, element_type: ov.Type) -> ov.Output:
    if value.get_element_type() != element_type:
        value = op("Convert", value, destination_type=element_type.get_type_name()).output(0)
    shape = value.get_partial_shape()
    if shape.rank.is_static and shape.rank.get_length() == 0:
        return value
    return op("Reshape", value, constant([], np.int64), special_zero=False).output(0)


class TripCount(Record):
    """What the Loop receives as trip count, where it came from, and whether it may be zero;
    what is known of a runtime count: a divisor (`multiple_of`) and an upper bound (`most`),
    which the two loops of a split loop have (lower/remainder.py)."""

    __slots__ = ("value", "source", "constant", "runtime", "multiple_of", "most", "_built")

    def __init__(
        self,
        value: ov.Output,
        source: str,
        constant: int | None,
        runtime: bool,
        multiple_of: int = 1,
        most: int | None = None,
    ) -> None:
        self.value = value
        self.source = source
        self.constant = constant
        self.runtime = runtime
        self.multiple_of = multiple_of
        self.most = most
        self._built: dict = {}

    @property
    def proven_zero(self) -> bool:
        return self.constant == 0

    def built(self, what: str, build: Callable[[], ov.Output]) -> ov.Output:
        """`build()` the first time `what` is asked of this count, then the same value: the
        loops counting by one runtime value share their count (`trip_count`'s `guarded`) and
        so what is built from it alone, as lower/shared_ops.py would make them share it."""
        if what not in self._built:
            self._built[what] = build()
        return self._built[what]


def trip_count(
    value: ov.Output | None,
    sliced: list[ov.Output] = (),
    axes: list[int] = (),
    must_agree: bool = False,
    what: str = "",
    guarded: dict[tuple[int, int], TripCount] | None = None,
) -> TripCount:
    """Map an ONNX `M` to a Loop-5 trip count, bounded by the sliced inputs' lengths.

    Absent or >= 2**31-1 -> -1 (unbounded: the CPU plugin would truncate it to i32);
    negative -> 0 (onnxruntime runs no iteration). Constants are mapped here, runtime values
    by a Select in the graph; a value computed from constants and static shapes alone
    (`Shape(x)[0]` once x's shape is static) is a constant (ovgraph.folded_value). A Loop
    does not stop at the end of a sliced input by itself, so the count is capped at the
    shortest one; when the lengths `must_agree` (Scan), differing static lengths are an error
    and at run time the longest is used, so that a shorter input makes the Loop fail rather
    than silently drop iterations. `guarded`: the runtime counts guarded before, by their
    source value, reused (loops counting by one value share its guard, as `lower/shared_ops.py`
    would make them share it later; a constant count is each loop's own: a Loop must not share
    a Constant input).
    """
    trip = _onnx_trip_count(value, {} if guarded is None else guarded)
    if not sliced:
        return trip
    static = [_static_length(value, axis) for value, axis in zip(sliced, axes)]
    known = [size for size in static if size is not None]
    if must_agree and len(set(known)) > 1:
        raise ConversionError(f"{what}: scan inputs differ in length along their axes: {known}")
    return capped(trip, sliced, axes, ops.maximum if must_agree else ops.minimum)


def capped(
    trip: TripCount, sliced: list[ov.Output], axes: list[int], combine=ops.minimum
) -> TripCount:
    """`trip` capped at the length of the sliced values `sliced` along `axes` (their lengths
    joined by `combine`; static lengths by their minimum): an unbounded count becomes that
    length; a count that is constant and lengths that are static, a constant."""
    static = [_static_length(value, axis) for value, axis in zip(sliced, axes)]
    if None not in static and trip.source != TRIP_COUNT_INPUT:
        count = min(static) if trip.constant is None else min(min(static), trip.constant)
        return TripCount(constant(count, np.int64), TRIP_COUNT_CONSTANT, count, False)
    lengths = [length(value, axis) for value, axis in zip(sliced, axes)]
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


def _static_length(value: ov.Output, axis: int) -> int | None:
    shape = value.get_partial_shape()
    if shape.rank.is_dynamic or axis >= shape.rank.get_length() or shape[axis].is_dynamic:
        return None
    return shape[axis].get_length()


def _onnx_trip_count(
    value: ov.Output | None, guarded: dict[tuple[int, int], TripCount]
) -> TripCount:
    if value is None:
        return TripCount(constant(-1, np.int64), TRIP_COUNT_UNBOUNDED, None, False)
    source = (value.get_node().get_instance_id(), value.get_index())
    if source in guarded:
        return guarded[source]
    known = folded_value(value)
    if known is not None and known.size == 1:
        count = int(known.reshape(-1)[0])
        if count >= INT32_MAX:
            return TripCount(constant(-1, np.int64), TRIP_COUNT_UNBOUNDED, None, False)
        count = max(count, 0)
        return TripCount(constant(count, np.int64), TRIP_COUNT_CONSTANT, count, False)
    trip = _guarded(value)
    rank = value.get_partial_shape().rank
    if rank.is_static and rank.get_length() == 0:  # not a Reshape: share_ops leaves those alone
        guarded[source] = trip
    return trip


def _guarded(value: ov.Output) -> TripCount:
    """A runtime ONNX `M` as Loop-5's trip count: -1 from 2**31-1 on, 0 at 0 and below."""
    count = _scalar(value, ov.Type.i64)
    # Decide in f32: the CPU plugin compares i64 values as truncated i32 (2**32+3 -> 3), but a
    # Convert reads the full i64. f32(2**31-1) rounds up to 2**31, so ">= 2**31" covers it.
    as_float = op("Convert", count, destination_type="f32")
    too_big = op("GreaterEqual", as_float, constant(2.0**31, np.float32))
    not_positive = op("LessEqual", as_float, constant(0.0, np.float32))
    clamped = op("Select", not_positive, constant(0, np.int64), count)
    guarded = op("Select", too_big, constant(-1, np.int64), clamped).output(0)
    return TripCount(guarded, TRIP_COUNT_INPUT, None, True)


class InitialCondition(Record):
    """What the Loop receives as initial execution condition."""

    __slots__ = ("value", "constant", "runtime")

    def __init__(self, value: ov.Output, constant: bool | None, runtime: bool) -> None:
        self.value = value
        self.constant = constant
        self.runtime = runtime


def initial_condition(value: ov.Output | None) -> InitialCondition:
    """An omitted ONNX `cond` starts true; constants (also values computed from constants and
    static shapes alone) are recognised so a false one can be folded."""
    if value is None:
        return InitialCondition(constant(True), True, False)
    known = folded_value(value)
    if known is not None and known.size == 1:
        flag = bool(known.reshape(-1)[0])
        return InitialCondition(constant(flag), flag, False)
    return InitialCondition(_scalar(value, ov.Type.boolean), None, True)


def runs_zero(trip: TripCount, condition: InitialCondition) -> ov.Output | None:
    """A boolean that is true when a runtime trip count or condition stops the loop before its
    first iteration; None when neither is a runtime value."""
    checks = []
    if trip.runtime:  # a nested loop's hoisted guard may have computed it already (licm.py)
        equal = op("Equal", trip.value, constant(0, np.int64))
        checks.append(twin(equal) or equal)
    if condition.runtime:
        checks.append(op("LogicalNot", condition.value))
    if not checks:
        return None
    return (checks[0] if len(checks) == 1 else op("LogicalOr", *checks)).output(0)
