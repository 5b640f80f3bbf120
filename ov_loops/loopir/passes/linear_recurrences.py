"""Pass: a loop of scalar steps whose carried values are linear recurrences runs as one
iteration over whole sequences."""

from __future__ import annotations

import functools

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.ports import UNNUMBERED, number_ports
from ov_loops.contract.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    MergedInput,
    SlicedInput,
)
from ov_loops.loopir.loop import Fallback, LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.opfactory import op

# Element-wise ops a step may use (numpy broadcasting: a scalar per step becomes a sequence).
ELEMENTWISE = frozenset(
    {
        "Add", "Subtract", "Multiply", "Divide", "Maximum", "Minimum", "Power", "Negative",
        "Exp", "Log", "Sqrt", "Abs", "Tanh", "Sigmoid", "SoftPlus", "Convert", "Select",
        "Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual", "LogicalAnd",
        "LogicalOr", "LogicalNot",
    }
)  # fmt: skip
# Ops that only add or drop the axis 0 of length 1 of a per-step value (identity on sequences).
AXIS_OPS = frozenset({"Squeeze", "Unsqueeze", "Reshape"})
MAX_STEPS = 4096  # the sequences are [T]; the scan below takes log2(T) rounds


class SolveLinearRecurrences(LoopPass):
    """A loop of a constant T steps on scalars (rank 0, or rank 1 of length 1: a sliced row of
    a [T] sequence, a part of a [T] stack) whose every carried value is a linear recurrence,
    x = x * a + b (or x + b) with a and b not depending on any carried value, becomes one
    iteration on whole sequences: each step's value a [T] vector, each carried value solved
    by a prefix scan of its (a, b) pairs (Hillis-Steele, log2(T) rounds)::

        x_t = a_t x_{t-1} + b_t                       ->   (A, B) = scan((a, b), compose)
                                                          X = A x_0 + B, X_prev = [x_0, X[:-1]]
        compose((a', b'), (a, b)) = (a a', a b' + b)  # the step after another

    The products are those of the sequential loop, grouped otherwise (f32 rounding differs);
    a sum (x + b) is the loop's own, CumSum adding x_0 first. Where a grouped product leaves
    f32's range the values would differ from the loop's (a product of coefficients over d
    steps that overflows against a state too small for the loop to overflow, |x| |a|^d < 3e38;
    one that underflows before a large state), so the loop itself runs instead (an If,
    lower/fallback.py) when, for a real type::

        growth = sum_t ln max(|a_t|, 1)        size = |x_0| + sum_t |b_t|
        unsafe = not growth + ln(1 + size) < 60 ln 2  or  not sum_t |x_t| < max / 2   (f32)
        outputs = unsafe ? the loop's : the solved ones

    Every product of coefficients and every value is then below 2^60 (no overflow, in the
    loop either); a product that underflows (f32's smallest normal is 2^-126, the CPU plugin
    may flush subnormals to 0) loses less than 2^-126 before factors and values of at most
    2^60: the solved values differ from the loop's by f32 rounding and by less than T 2^-60
    in absolute value (coefficients that decay, |a| < 1, grow nothing: a 0.05^t underflows
    harmlessly). A NaN or inf among a, b, x_0 reaches the sums: the loop runs, with its own
    semantics. Growth (a 2 for 60 steps), or values near 2^60, run the loop too.
    The CPU plugin runs each scalar op of a Loop body as a node of its own: a 60-step AR(1)
    scan and its gradient (2 and 7 scalar ops a step) cost about 0.2 us per op; here they
    are a few dozen vector ops.
    """

    name = "solve-linear-recurrences"
    level = "max"

    def run(self, loop: LoopIR) -> LoopIR:
        steps = loop.trip.constant
        if steps is None or not 1 <= steps <= MAX_STEPS or not _qualifies(loop):
            return loop
        replaced = loop.replace(body=loop.body.clone())  # before the lifting shares its nodes
        lifted = _Lifted(loop, steps)
        solved = lifted.body()
        if solved is None:
            return loop
        parameters, inputs, outer, results, outputs = solved
        fallback = None
        if lifted.unsafe:  # a flag before the condition's Result, on the port after the others
            any_unsafe = functools.reduce(ops.logical_or, lifted.unsafe)
            results.insert(-1, ops.result(ops.logical_not(any_unsafe)))
            outputs.append(LastValueOutput(UNNUMBERED, len(results) - 2))
            fallback = Fallback(replaced, len(outputs) - 1)
        body = ov.Model(results, parameters, loop.body.get_friendly_name())
        spec = number_ports(
            inputs, outputs, loop.spec.trip_count_source, steps, None, len(results) - 1
        )
        changed = loop.replace(body=body, spec=spec, outer=outer, carried=(), fallback=fallback)
        return changed.with_trip_count(1).noting(
            f"solved {len(loop.spec.merged_inputs)} linear recurrence(s) over {steps} steps"
            + ("" if fallback is None else ", the loop run instead where f32's range is left")
        )


def _qualifies(loop: LoopIR) -> bool:
    """Rows of sequences read forward, a condition that stays true, no start condition."""
    spec = loop.spec
    condition = loop.body_value(spec.execution_condition)
    return (
        loop.start.constant is True
        and condition.get_node().get_type_name() == "Constant"
        and bool(condition.get_node().get_data().all())
        and all(
            (e.axis, e.start, e.stride, e.part_size, e.end) == (0, 0, 1, 1, -1)
            for e in spec.sliced_inputs
        )
        and all(
            (e.axis, e.start, e.stride, e.part_size, e.end) == (0, 0, 1, 1, -1)
            for e in spec.concatenated_outputs
        )
    )


def _scalar(value: ov.Output) -> bool:
    """Whether `value` is a scalar or a [1] vector."""
    shape = value.get_partial_shape()
    return shape.is_static and (len(shape) == 0 or list(shape.to_shape()) == [1])


class _Lifted:
    """The body's values lifted to sequences: a per-step value is [T], an invariant stays."""

    def __init__(self, loop: LoopIR, steps: int) -> None:
        self.loop, self.steps = loop, steps
        self.values: dict[tuple[int, int], tuple[ov.Output, bool]] = {}
        self.parameters: list[ov.Node] = []
        self.initials: dict[int, ov.Output] = {}
        self.unsafe: list[ov.Output] = []  # boolean flags: the loop must run instead

    def body(self):
        """(Parameters, input entries, outer values, Results, output entries) of the lifted
        body, or None when a value does not qualify."""
        loop, spec = self.loop, self.loop.spec
        parameters = loop.body.get_parameters()
        inputs, outer = [], {}
        try:
            for entry in spec.sliced_inputs + spec.invariant_inputs + spec.merged_inputs:
                old = parameters[entry.body_parameter]
                if not _scalar(old.output(0)):
                    return None
                whole = loop.outer[entry.external_port]
                shape = whole.get_partial_shape() if isinstance(entry, SlicedInput) else None
                if shape is not None and (shape.rank.is_dynamic or len(shape) != 1):
                    return None
                new = ops.parameter(
                    shape if shape is not None else old.get_output_partial_shape(0),
                    old.get_output_element_type(0),
                )
                inputs.append(InvariantInput(UNNUMBERED, len(self.parameters)))
                outer[2 + len(outer)] = whole
                self.parameters.append(new)
                self._enter(old, new.output(0), entry)
            results, outputs = self._outputs()
        except _NotLinear:
            return None
        return self.parameters, inputs, outer, results, outputs

    def _enter(self, old: ov.Node, new: ov.Output, entry) -> None:
        """The lifted value of body Parameter `old` given its new Parameter `new`."""
        if isinstance(entry, SlicedInput):
            stop = ops.constant(np.array([self.steps], np.int64))
            zero, one = (ops.constant(np.array([k], np.int64)) for k in (0, 1))
            new = ops.slice(new, zero, stop, one, zero).output(0)
            self.values[_key(old.output(0))] = (new, True)
        elif isinstance(entry, MergedInput):
            self.initials[entry.body_parameter] = new  # x_0: the value is solved later
        else:
            self.values[_key(old.output(0))] = (new, False)

    def _outputs(self):
        spec, loop = self.loop.spec, self.loop
        iteration = spec.current_iteration
        if iteration is not None:
            old = loop.body.get_parameters()[iteration].output(0)
            count = ops.range(0, self.steps, 1, old.get_element_type())
            self.values[_key(old)] = (count.output(0), True)
        self._solve_all(list(spec.merged_inputs))
        results, outputs = [], []
        for entry in spec.outputs():
            value, per_step = self.lift(loop.body_value(entry.body_result))
            if isinstance(entry, ConcatenatedOutput):
                value = ops.broadcast(value, ops.constant(np.array([self.steps], np.int64)))
            else:
                value = self._last(value, per_step, loop.body_value(entry.body_result))
            results.append(ops.result(value))
            outputs.append(LastValueOutput(UNNUMBERED, len(results) - 1))
        results.append(ops.result(ops.constant(True)))
        return results, outputs

    def _last(self, value: ov.Output, per_step: bool, old: ov.Output) -> ov.Output:
        """A last value: the sequence's last element, in the body value's shape."""
        if per_step:
            index = ops.constant(np.array([self.steps - 1], np.int64))
            value = ops.gather(value, index, ops.constant(np.int64(0))).output(0)
        shape = ops.constant(np.array(list(old.get_partial_shape().to_shape()), np.int64))
        return ops.reshape(value, shape, False).output(0)

    def _solve_all(self, unsolved: list[MergedInput]) -> None:
        """Every carried value as its sequence of previous values (x_{t-1}), each once the
        carried values its coefficients read are solved (x = x a + y b with y solved first)."""
        while unsolved:
            waiting = []
            for entry in unsolved:
                try:
                    self._solve(entry)
                except _NotLinear:
                    waiting.append(entry)
            if len(waiting) == len(unsolved):
                raise _NotLinear
            unsolved = waiting

    def _solve(self, entry: MergedInput) -> None:
        parameter = self.loop.body.get_parameters()[entry.body_parameter].output(0)
        a, b = _coefficients(self.loop.body_value(entry.body_result), parameter)
        a = None if a is None else self._sequence(a)
        b = self._sequence(b)
        previous = self._previous(self.initials[entry.body_parameter], a, b)
        self.values[_key(parameter)] = (previous, True)

    def _sequence(self, value: ov.Output) -> ov.Output:
        """`value` lifted and broadcast to [T] (raises _NotLinear while it reads a carried
        value not yet solved, its own included)."""
        lifted, _ = self.lift(value)
        return ops.broadcast(lifted, ops.constant(np.array([self.steps], np.int64))).output(0)

    def _previous(self, initial: ov.Output, a: ov.Output | None, b: ov.Output) -> ov.Output:
        """[x_0, x_1, .., x_{T-1}] for x_t = a_t x_{t-1} + b_t (a None: 1)."""
        x0 = ops.reshape(initial, ops.constant(np.array([1], np.int64)), False).output(0)
        if self.steps == 1:
            return x0  # the body's own step computes x_1
        if a is None:  # the loop's sums in its order: x_0 + b_1 + .. + b_t
            sums = ops.cumsum(ops.concat([x0, b], 0), ops.constant(np.int64(0))).output(0)
            return _rows(sums, 0, self.steps)
        products, sums = _scan(a, b, self.steps)
        solved = ops.add(ops.multiply(products, x0), sums).output(0)
        previous = ops.concat([x0, _rows(solved, 0, self.steps - 1)], 0).output(0)
        if b.get_element_type().is_real():  # (integers wrap, whatever the grouping)
            self.unsafe += [_may_leave_range(a, b, x0), _not_finite_sum(solved)]
        return previous

    def lift(self, value: ov.Output) -> tuple[ov.Output, bool]:
        """`value` on sequences, and whether it differs per step."""
        key = _key(value)
        if key in self.values:
            return self.values[key]
        node = value.get_node()
        kind = node.get_type_name()
        if kind == "Constant":
            lifted = (value, False) if _scalar(value) else None
        elif kind == "Parameter":
            raise _NotLinear  # a carried value read by its own coefficients
        elif kind in AXIS_OPS and _scalar(value):
            lifted = self._axis(node, value)
        elif kind in ELEMENTWISE and node.get_output_size() == 1:
            inputs = [self.lift(v) for v in node.input_values()]
            try:  # an op that does not broadcast (auto_broadcast "none") refuses [T] with []
                copy = op(kind, *[v for v, _ in inputs], **node.get_attributes())
            except RuntimeError:
                raise _NotLinear from None
            lifted = (copy.output(0), any(per_step for _, per_step in inputs))
        else:
            lifted = None
        if lifted is None:
            raise _NotLinear
        self.values[key] = lifted
        return lifted

    def _axis(self, node: ov.Node, value: ov.Output) -> tuple[ov.Output, bool]:
        """A Squeeze, Unsqueeze or Reshape between [] and [1]: the same sequence."""
        source, per_step = self.lift(node.input_value(0))
        if per_step:
            return source, True
        shape = ops.constant(np.array(list(value.get_partial_shape().to_shape()), np.int64))
        return ops.reshape(source, shape, False).output(0), False


class _NotLinear(Exception):
    """A body value outside what SolveLinearRecurrences takes."""


def _key(value: ov.Output) -> tuple[int, int]:
    return value.get_node().get_instance_id(), value.get_index()


def _coefficients(value: ov.Output, carried: ov.Output) -> tuple[ov.Output | None, ov.Output]:
    """(a, b) of value = carried * a + b (a None for carried + b)."""
    node = value.get_node()
    if node.get_type_name() == "Maximum" and node.input_value(0) == node.input_value(1):
        return _coefficients(node.input_value(0), carried)  # a back edge's copy
    if node.get_type_name() != "Add":
        raise _NotLinear
    for term, b in (node.input_values(), reversed(node.input_values())):
        if term == carried:
            return None, b
        product = term.get_node()
        if product.get_type_name() == "Multiply":
            factors = list(product.input_values())
            if factors.count(carried) == 1:
                return factors[1 - factors.index(carried)], b
    raise _NotLinear


def _at(*k: int) -> ov.Output:
    return ops.constant(np.array(k, np.int64)).output(0)


def _rows(value: ov.Output, start: int, stop: int) -> ov.Output:
    """value[start:stop] along axis 0."""
    return ops.slice(value, _at(start), _at(stop), _at(1), _at(0)).output(0)


def _shifted(value: ov.Output, by: int, steps: int, fill: float) -> ov.Output:
    """value moved `by` rows down, the first `by` rows `fill`."""
    head = ops.constant(np.full([by], fill, value.get_element_type().to_dtype()))
    return ops.concat([head, _rows(value, 0, steps - by)], 0).output(0)


def _scan(a: ov.Output, b: ov.Output, steps: int) -> tuple[ov.Output, ov.Output]:
    """Inclusive prefix compositions of the steps (a_t, b_t): x_t = A_t x_0 + B_t."""
    distance = 1
    while distance < steps:
        b = ops.add(b, ops.multiply(a, _shifted(b, distance, steps, 0))).output(0)
        a = ops.multiply(a, _shifted(a, distance, steps, 1)).output(0)
        distance *= 2
    return a, b


def _may_leave_range(a: ov.Output, b: ov.Output, x0: ov.Output) -> ov.Output:
    """Whether a product the scan forms may exceed 2^60 times the values it multiplies (f32;
    15/32 of the type's largest exponent):
    not (sum_t ln max(|a_t|, 1)) + ln(1 + |x_0| + sum_t |b_t|) < 60 ln 2."""
    dtype = a.get_element_type().to_dtype()
    limit = np.array(np.log(np.finfo(dtype).max) * 15 / 32, dtype)
    one = ops.constant(np.ones([], dtype))
    growth = ops.reduce_sum(ops.log(ops.maximum(ops.abs(a), one)), _at(0), False)
    size = ops.add(ops.reduce_sum(ops.abs(b), _at(0), False), ops.abs(x0))
    bound = ops.add(growth, ops.log(ops.add(ops.reshape(size, _at(), False), one)))
    return ops.logical_not(ops.less(bound, ops.constant(limit))).output(0)


def _not_finite_sum(value: ov.Output) -> ov.Output:
    """Whether value holds a NaN or inf, or its sum of magnitudes reaches half the largest
    finite value: not sum |value| < max / 2."""
    dtype = value.get_element_type().to_dtype()
    half = ops.constant(np.array(np.finfo(dtype).max / 2, dtype))
    total = ops.reduce_sum(ops.abs(value), _at(0), False)
    return ops.logical_not(ops.less(total, half)).output(0)
