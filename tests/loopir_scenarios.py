"""Hand-built LoopIRs, each named for what it exercises: the inputs of the pass tests.

Every builder takes no argument and returns (loop, parameters, feeds): a fresh LoopIR (passes
may rewrite its body in place, so build one per use), the Parameters of the outer graph its
outer values come from, and numpy values for them by name. Each is registered in SCENARIOS by
`@scenario` (variants by `@scenario_as`); `accumulating_loop` is a building block, not a
scenario.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.kinds import tensors
from ov_loops.contract.ports import UNNUMBERED, number_ports
from ov_loops.contract.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    MergedInput,
    SlicedInput,
)
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.steps import Reverse
from ov_loops.loopir.trip_count import TripCount, initial_condition, trip_count
from tests.registry import Registry

SCENARIOS: Registry = Registry("LoopIR scenario")
scenario = SCENARIOS.register
scenario_as = SCENARIOS.register_as

Scenario = tuple[LoopIR, list[ov.Node], dict[str, np.ndarray]]
HIGH_RANK = 12  # the rank of the per-iteration value whose stacked part has rank 13


def _parameter(name: str, shape, element: ov.Type = ov.Type.f32) -> ov.Node:
    """A Parameter whose friendly name and tensor name are `name`."""
    parameter = ops.parameter(ov.PartialShape(shape), element)
    parameter.set_friendly_name(name)
    parameter.output(0).set_names({name})
    return parameter


def _i64(*values: int) -> ov.Output:
    return ops.constant(np.array(values, np.int64)).output(0)


def _stacked(value, axis: int = 0) -> ov.Node:
    """The Result of a per-iteration value with its stacking axis (a concatenated output's part)."""
    return ops.result(ops.unsqueeze(value, _i64(axis)))


def _always() -> ov.Node:
    return ops.result(ops.constant(True))


def _loop(path: str, results, parameters, inputs, outputs, outer, trip, start, **special):
    """A LoopIR from its body, port_map entries in port order and outer values in that order;
    its results are the Loop's outputs in port order, carried values start at their outer
    value (the merged inputs come first in `inputs`)."""
    body = ov.Model(results, parameters, f"{path}/body")
    spec = number_ports(inputs, outputs, trip.source, trip.constant, **special)
    initial = {
        entry.body_result: value
        for entry, value in zip(inputs, outer)
        if isinstance(entry, MergedInput)
    }
    loop_results = [
        LoopResult(port, initial=initial.get(entry.body_result))
        if isinstance(entry, LastValueOutput)
        else LoopResult(port)
        for port, entry in enumerate(outputs)
    ]
    return LoopIR(
        path=path,
        op="test",
        spec=spec,
        body=body,
        outer=dict(enumerate(outer, start=2)),
        trip=trip,
        start=start,
        carried=tensors([f"carried{k}" for k in range(len(initial))]),
        results=tuple(loop_results),
    )


@scenario
def runtime_counter_two_carried() -> Scenario:
    """A runtime trip count; `a` grows by the iteration number, `b` passes through unchanged;
    both last values and the stack of `a`."""
    count, a0, b0 = _parameter("M", [], ov.Type.i64), _parameter("a0", [2]), _parameter("b0", [2])
    i = _parameter("i", [], ov.Type.i64)
    a, b = _parameter("a", [2]), _parameter("b", [2])
    a_next = ops.add(a, ops.convert(i, ov.Type.f32))
    results = [ops.result(a_next), ops.result(b), _stacked(a_next), _always()]
    loop = _loop(
        "runtime_counter",
        results,
        [i, a, b],
        [MergedInput(UNNUMBERED, 1, 0), MergedInput(UNNUMBERED, 2, 1)],
        [
            LastValueOutput(UNNUMBERED, 0),
            LastValueOutput(UNNUMBERED, 1),
            ConcatenatedOutput(UNNUMBERED, 2, 0),
        ],
        [a0.output(0), b0.output(0)],
        trip_count(count.output(0)),
        initial_condition(None),
        current_iteration=0,
        execution_condition=3,
    )
    feeds = {
        "M": np.array(3, np.int64),
        "a0": np.array([0.5, -1.0], np.float32),
        "b0": np.array([2.0, 3.0], np.float32),
    }
    return loop, [count, a0, b0], feeds


@scenario
def captures_constant_and_parameter() -> Scenario:
    """h = tanh(h @ W + x): W an outer Constant (a MatMul weight), x an outer Parameter that
    also reaches a Concat (the stacked [x; h]); a constant trip count."""
    x, h0 = _parameter("x", [2, 3]), _parameter("h0", [2, 3])
    weight = np.linspace(-1.0, 1.0, 9, dtype=np.float32).reshape(3, 3)
    h, w, x_in = _parameter("h", [2, 3]), _parameter("w", [3, 3]), _parameter("x_in", [2, 3])
    h_next = ops.tanh(ops.add(ops.matmul(h, w, False, False), x_in))
    results = [ops.result(h_next), _stacked(ops.concat([x_in, h_next], 0)), _always()]
    loop = _loop(
        "captures",
        results,
        [h, w, x_in],
        [
            MergedInput(UNNUMBERED, 0, 0),
            InvariantInput(UNNUMBERED, 1),
            InvariantInput(UNNUMBERED, 2),
        ],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [h0.output(0), ops.constant(weight).output(0), x.output(0)],
        trip_count(ops.constant(np.int64(3)).output(0)),
        initial_condition(None),
        execution_condition=2,
    )
    rows = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    return loop, [x, h0], {"x": rows, "h0": rows[::-1].copy()}


@scenario
def reversed_slice_and_reverse_step() -> Scenario:
    """acc = acc / 2 + x_t over xs read from its end (start -1, stride -1, end 0); the stack
    of acc is reversed after the loop (a Reverse step); the trip count is xs' length."""
    xs, acc0 = _parameter("xs", [4, 2]), _parameter("acc0", [2])
    acc, part = _parameter("acc", [2]), _parameter("x_t", [1, 2])
    x_t = ops.squeeze(part, _i64(0))
    acc_next = ops.add(ops.multiply(acc, ops.constant(np.float32(0.5))), x_t)
    results = [ops.result(acc_next), _stacked(acc_next), _always()]
    loop = _loop(
        "reversed",
        results,
        [acc, part],
        [MergedInput(UNNUMBERED, 0, 0), SlicedInput(UNNUMBERED, 1, 0, start=-1, stride=-1, end=0)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [acc0.output(0), xs.output(0)],
        trip_count(None, [xs.output(0)], [0]),
        initial_condition(None),
        execution_condition=2,
    )
    stacked = loop.results[1]
    loop = loop.replace(results=(loop.results[0], stacked.with_step(Reverse(0))))
    feeds = {
        "xs": np.arange(8, dtype=np.float32).reshape(4, 2),
        "acc0": np.array([1.0, -1.0], np.float32),
    }
    return loop, [xs, acc0], feeds


def _trip(count: int, runtime: bool, parameters: list[ov.Node], feeds: dict) -> TripCount:
    """A trip count of `count`: a constant, or a runtime value fed as M (added to the outer
    `parameters` and to `feeds`)."""
    if not runtime:
        return trip_count(ops.constant(np.int64(count)).output(0))
    parameters.append(_parameter("M", [], ov.Type.i64))
    feeds["M"] = np.array(count, np.int64)
    return trip_count(parameters[-1].output(0))


def _rank13(first_dim: int, count: int = 3, runtime: bool = False) -> Scenario:
    """v = v * 2 carried with rank 12, stacked along axis 1: a part of rank 13, `count` times.
    `first_dim` -1 leaves the first dim dynamic (the flattened part's shape then leaves the
    body)."""
    shape = [first_dim] + [1] * (HIGH_RANK - 1)
    v0, v = _parameter("v0", shape), _parameter("v", shape)
    v_next = ops.multiply(v, ops.constant(np.float32(2.0)))
    results = [ops.result(v_next), _stacked(v_next, 1), _always()]
    values = np.array([1.0, -2.0], np.float32).reshape([2] + [1] * (HIGH_RANK - 1))
    parameters, feeds = [v0], {"v0": values}
    loop = _loop(
        "rank13",
        results,
        [v],
        [MergedInput(UNNUMBERED, 0, 0)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 1)],
        [v0.output(0)],
        _trip(count, runtime, parameters, feeds),
        initial_condition(None),
        execution_condition=2,
    )
    return loop, parameters, feeds


@scenario
def rank13_stack_static() -> Scenario:
    return _rank13(2)


@scenario
def rank13_stack_dynamic() -> Scenario:
    return _rank13(-1)


@scenario
def rank13_stack_dynamic_runtime_trip_count_zero() -> Scenario:
    return _rank13(-1, 0, runtime=True)


def accumulating_loop(
    count: int, runtime: bool = True, carried_shape=(2,), entering=(2,)
) -> Scenario:
    """y = y + x (x captured), stacked, `count` times: a runtime trip count fed as M, or a
    constant one. `carried_shape` is the body's declared shape of y (a dynamic one is
    tightened by the body to [2]); `entering` the declared shape of its initial value y0."""
    x, y0 = _parameter("x", [2]), _parameter("y0", list(entering))
    y, x_in = _parameter("y", list(carried_shape)), _parameter("x_in", [2])
    y_next = ops.add(y, x_in)
    results = [ops.result(y_next), _stacked(y_next), _always()]
    parameters = [x, y0]
    feeds = {"x": np.array([1.0, 2.0], np.float32), "y0": np.array([0.5, -0.5], np.float32)}
    loop = _loop(
        "accumulate",
        results,
        [y, x_in],
        [MergedInput(UNNUMBERED, 0, 0), InvariantInput(UNNUMBERED, 1)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [y0.output(0), x.output(0)],
        _trip(count, runtime, parameters, feeds),
        initial_condition(None),
        execution_condition=2,
    )
    return loop, parameters, feeds


@scenario_as("runtime_trip_count_zero")
def _runtime_trip_count_zero() -> Scenario:
    return accumulating_loop(0)


@scenario_as("runtime_trip_count_three")
def _runtime_trip_count_three() -> Scenario:
    return accumulating_loop(3)


@scenario_as("runtime_trip_count_carried_value_entering_unknown")
def _entering_unknown() -> Scenario:
    """y enters as [?] and leaves as [2]: its zero runs go to an If around the Loop-5
    (passes/zero_run_carry.py)."""
    return accumulating_loop(2, carried_shape=(-1,), entering=(-1,))


@scenario
def condition_stops_early() -> Scenario:
    """s = s * 2 without a trip count, the execution condition i < 2 computed in the body from
    current_iteration (three iterations); the initial condition a runtime input."""
    s0, go = _parameter("s0", [1]), _parameter("go", [], ov.Type.boolean)
    i, s = _parameter("i", [], ov.Type.i64), _parameter("s", [1])
    s_next = ops.multiply(s, ops.constant(np.float32(2.0)))
    keep_going = ops.less(i, ops.constant(np.int64(2)))
    results = [ops.result(s_next), _stacked(s_next), ops.result(keep_going)]
    loop = _loop(
        "stops_early",
        results,
        [s, i],
        [MergedInput(UNNUMBERED, 0, 0)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [s0.output(0)],
        trip_count(None),
        initial_condition(go.output(0)),
        current_iteration=1,
        execution_condition=2,
    )
    return loop, [s0, go], {"s0": np.array([1.5], np.float32), "go": np.array(True)}


def counted_while_loop(trip: int | None, bound: int) -> Scenario:
    """A while loop as tf2onnx writes a counted one: s = s * 2 stacked, a counter t from 0 by
    1, cond = t + 1 < bound and i < 5 (i the iteration number, 5 a capture); the trip count
    `trip` (None: unbounded)."""
    s0, five = _parameter("s0", [1]), ops.constant(np.int64(5)).output(0)
    i, s = _parameter("i", [], ov.Type.i64), _parameter("s", [1])
    t, limit = _parameter("t", [], ov.Type.i64), _parameter("limit", [], ov.Type.i64)
    s_next = ops.multiply(s, ops.constant(np.float32(2.0)))
    t_next = ops.add(t, ops.constant(np.int64(1)))
    going = ops.logical_and(ops.less(t_next, ops.constant(np.int64(bound))), ops.less(i, limit))
    results = [ops.result(s_next), ops.result(t_next), _stacked(s_next), ops.result(going)]
    count = None if trip is None else ops.constant(np.int64(trip)).output(0)
    loop = _loop(
        "counted_while",
        results,
        [s, t, limit, i],
        [
            MergedInput(UNNUMBERED, 0, 0),
            MergedInput(UNNUMBERED, 1, 1),
            InvariantInput(UNNUMBERED, 2),
        ],
        [
            LastValueOutput(UNNUMBERED, 0),
            LastValueOutput(UNNUMBERED, 1),
            ConcatenatedOutput(UNNUMBERED, 2, 0),
        ],
        [s0.output(0), ops.constant(np.int64(0)).output(0), five],
        trip_count(count),
        initial_condition(None),
        current_iteration=3,
        execution_condition=3,
    )
    return loop, [s0], {"s0": np.array([1.5], np.float32)}


@scenario_as("counted_while_loop_stopped_by_its_condition")
def _counted_by_condition() -> Scenario:
    return counted_while_loop(None, 4)


@scenario_as("counted_while_loop_stopped_by_its_trip_count")
def _counted_by_trip_count() -> Scenario:
    return counted_while_loop(3, 7)


def _branch(factor: float, s: ov.Output, x: ov.Output) -> tuple[ov.Model, list[ov.Node]]:
    """An If branch (s, x) -> (s * factor, -x), its Parameters' shapes those of s and x."""
    s_in, x_in = ops.parameter(s.get_partial_shape()), ops.parameter(x.get_partial_shape())
    scaled = ops.result(ops.multiply(s_in, ops.constant(np.float32(factor))))
    return ov.Model([scaled, ops.result(ops.negative(x_in))], [s_in, x_in]), [s_in, x_in]


@scenario
def constant_controls_if_drops_a_capture() -> Scenario:
    """s = s * 2 on even iterations, s * 3 on odd ones (an If), from a Constant s0, without a
    trip count or initial condition, stopped by i < 2 in the body: a stack of a dynamic length.
    A captured x goes into the If only for an output nothing reads (OpenVINO drops it)."""
    x = _parameter("x", [1])
    i, s, x_in = _parameter("i", [], ov.Type.i64), _parameter("s", [1]), _parameter("x_in", [1])
    even = ops.equal(ops.floor_mod(i, ops.constant(np.int64(2))), ops.constant(np.int64(0)))
    choose = ops.if_op(even)
    (then_body, then_in), (else_body, else_in) = _branch(2.0, s, x_in), _branch(3.0, s, x_in)
    choose.set_then_body(then_body)
    choose.set_else_body(else_body)
    for value, then_parameter, else_parameter in zip([s, x_in], then_in, else_in):
        choose.set_input(value.output(0), then_parameter, else_parameter)
    s_next = choose.set_output(then_body.get_results()[0], else_body.get_results()[0])
    choose.set_output(then_body.get_results()[1], else_body.get_results()[1])
    keep_going = ops.less(i, ops.constant(np.int64(2)))
    results = [ops.result(s_next), _stacked(s_next), ops.result(keep_going)]
    loop = _loop(
        "constant_controls",
        results,
        [s, i, x_in],
        [MergedInput(UNNUMBERED, 0, 0), InvariantInput(UNNUMBERED, 2)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [ops.constant(np.array([1.5], np.float32)).output(0), x.output(0)],
        trip_count(None),
        initial_condition(None),
        current_iteration=1,
        execution_condition=2,
    )
    return loop, [x], {"x": np.array([5.0], np.float32)}


@scenario
def invariant_matmul_chain() -> Scenario:
    """h = tanh(h @ P) with P = (W1 @ W2) * 0.5 (W1, W2 outer Parameters: P is the same in
    every iteration, a constant scales it); P is also a last value; a constant trip count."""
    w1, w2, h0 = _parameter("W1", [3, 4]), _parameter("W2", [4, 3]), _parameter("h0", [2, 3])
    h, w1_in, w2_in = _parameter("h", [2, 3]), _parameter("w1", [3, 4]), _parameter("w2", [4, 3])
    product = ops.multiply(ops.matmul(w1_in, w2_in, False, False), ops.constant(np.float32(0.5)))
    h_next = ops.tanh(ops.matmul(h, product, False, False))
    results = [ops.result(h_next), _stacked(h_next), ops.result(product), _always()]
    loop = _loop(
        "invariant_chain",
        results,
        [h, w1_in, w2_in],
        [
            MergedInput(UNNUMBERED, 0, 0),
            InvariantInput(UNNUMBERED, 1),
            InvariantInput(UNNUMBERED, 2),
        ],
        [
            LastValueOutput(UNNUMBERED, 0),
            ConcatenatedOutput(UNNUMBERED, 1, 0),
            LastValueOutput(UNNUMBERED, 2),
        ],
        [h0.output(0), w1.output(0), w2.output(0)],
        trip_count(ops.constant(np.int64(3)).output(0)),
        initial_condition(None),
        execution_condition=3,
    )
    generator = np.random.default_rng(11)
    feeds = {
        "W1": generator.standard_normal((3, 4)).astype(np.float32),
        "W2": generator.standard_normal((4, 3)).astype(np.float32),
        "h0": generator.standard_normal((2, 3)).astype(np.float32),
    }
    return loop, [w1, w2, h0], feeds


@scenario
def constant_subgraph_and_direct_capture() -> Scenario:
    """y = y * (c1 * c2) + x: a subgraph of constants alone and a capture x read directly by a
    node that changes every iteration; a constant trip count."""
    x, y0 = _parameter("x", [2]), _parameter("y0", [2])
    y, x_in = _parameter("y", [2]), _parameter("x_in", [2])
    scale = ops.multiply(
        ops.constant(np.array([0.5, 2.0], np.float32)), ops.constant(np.float32(0.75))
    )
    y_next = ops.add(ops.multiply(y, scale), x_in)
    loop = _loop(
        "constant_subgraph",
        [ops.result(y_next), _stacked(y_next), _always()],
        [y, x_in],
        [MergedInput(UNNUMBERED, 0, 0), InvariantInput(UNNUMBERED, 1)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [y0.output(0), x.output(0)],
        trip_count(ops.constant(np.int64(3)).output(0)),
        initial_condition(None),
        execution_condition=2,
    )
    feeds = {"x": np.array([1.0, -1.0], np.float32), "y0": np.array([0.25, 4.0], np.float32)}
    return loop, [x, y0], feeds


def pass_through_carried(count: int) -> Scenario:
    """acc = acc + c with c carried unchanged (its back edge returns its Parameter): last values
    of both, the stack of c; a runtime trip count `count`."""
    acc0, c0 = _parameter("acc0", [2]), _parameter("c0", [2])
    acc, c = _parameter("acc", [2]), _parameter("c", [2])
    results = [ops.result(ops.add(acc, c)), ops.result(c), _stacked(c), _always()]
    parameters = [acc0, c0]
    feeds = {"acc0": np.array([1.0, 2.0], np.float32), "c0": np.array([0.5, -3.0], np.float32)}
    loop = _loop(
        "pass_through",
        results,
        [acc, c],
        [MergedInput(UNNUMBERED, 0, 0), MergedInput(UNNUMBERED, 1, 1)],
        [
            LastValueOutput(UNNUMBERED, 0),
            LastValueOutput(UNNUMBERED, 1),
            ConcatenatedOutput(UNNUMBERED, 2, 0),
        ],
        [acc0.output(0), c0.output(0)],
        _trip(count, True, parameters, feeds),
        initial_condition(None),
        execution_condition=3,
    )
    return loop, parameters, feeds


@scenario_as("pass_through_carried_three")
def _pass_through_carried_three() -> Scenario:
    return pass_through_carried(3)


@scenario_as("pass_through_carried_zero")
def _pass_through_carried_zero() -> Scenario:
    return pass_through_carried(0)


@scenario
def unread_capture_and_slice() -> Scenario:
    """acc = acc + x + x_t over xs, with a capture u and a sliced input zs the body never reads;
    the trip count is the inputs' length."""
    xs, zs, x, u = (
        _parameter(name, shape)
        for name, shape in (("xs", [4, 2]), ("zs", [4, 2]), ("x", [2]), ("u", [3]))
    )
    acc0 = _parameter("acc0", [2])
    acc, x_part, z_part = (
        _parameter("acc", [2]),
        _parameter("x_t", [1, 2]),
        _parameter("z_t", [1, 2]),
    )
    x_in, u_in = _parameter("x_in", [2]), _parameter("u_in", [3])
    acc_next = ops.add(ops.add(acc, x_in), ops.squeeze(x_part, _i64(0)))
    loop = _loop(
        "unread",
        [ops.result(acc_next), _stacked(acc_next), _always()],
        [acc, x_part, z_part, x_in, u_in],
        [
            MergedInput(UNNUMBERED, 0, 0),
            SlicedInput(UNNUMBERED, 1, 0),
            SlicedInput(UNNUMBERED, 2, 0),
            InvariantInput(UNNUMBERED, 3),
            InvariantInput(UNNUMBERED, 4),
        ],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [acc0.output(0), xs.output(0), zs.output(0), x.output(0), u.output(0)],
        trip_count(None, [xs.output(0), zs.output(0)], [0, 0]),
        initial_condition(None),
        execution_condition=2,
    )
    rows = np.arange(8, dtype=np.float32).reshape(4, 2)
    feeds = {
        "xs": rows,
        "zs": -rows,
        "x": np.array([0.5, 1.5], np.float32),
        "u": np.ones(3, np.float32),
        "acc0": np.zeros(2, np.float32),
    }
    return loop, [xs, zs, x, u, acc0], feeds


# -- sliced parts (HoistSlicedComputation) ------------------------------------------------------
def _weights(rows: int, columns: int, seed: int) -> ov.Output:
    values = np.random.default_rng(seed).standard_normal((rows, columns)).astype(np.float32)
    return ops.constant(values / np.float32(np.sqrt(rows))).output(0)


def _part(name: str, shape: list[int], axis: int) -> tuple[ov.Node, ov.Output]:
    """A sliced input's body Parameter (`shape` with a length-1 axis at `axis`) and its part
    squeezed, as the frontends read it."""
    part = _parameter(name, [*shape[:axis], 1, *shape[axis:]])
    return part, ops.squeeze(part, _i64(axis)).output(0)


def _sequence(shape: list[int], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _rnn_over(xs: ov.Node, axis: int, x_shape, feeds: dict, path: str) -> Scenario:
    """h = tanh(x_t W + b + h R) (W, R body Constants, b an invariant input) over the parts of
    xs along `axis`; h and the stack of h; the trip count is xs' length along the axis."""
    hidden = 4
    h0, bias = _parameter("h0", [2, hidden]), _parameter("b", [hidden])
    h, b_in = _parameter("h", [2, hidden]), _parameter("b_in", [hidden])
    part, x_t = _part("x_t", x_shape, axis)
    projected = ops.add(ops.matmul(x_t, _weights(x_shape[-1], hidden, 1), False, False), b_in)
    recurrent = ops.matmul(h, _weights(hidden, hidden, 2), False, False)
    h_next = ops.tanh(ops.add(projected, recurrent))
    results = [ops.result(h_next), _stacked(h_next), _always()]
    loop = _loop(
        path,
        results,
        [h, b_in, part],
        [
            MergedInput(UNNUMBERED, 0, 0),
            InvariantInput(UNNUMBERED, 1),
            SlicedInput(UNNUMBERED, 2, axis),
        ],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [h0.output(0), bias.output(0), xs.output(0)],
        trip_count(None, [xs.output(0)], [axis]),
        initial_condition(None),
        execution_condition=2,
    )
    feeds |= {"h0": _sequence([2, hidden], 3), "b": _sequence([hidden], 4)}
    return loop, [xs, h0, bias], feeds


@scenario
def rnn_step_input_projection() -> Scenario:
    """h = tanh(x_t W + b + h R), x_t [2, 3] the parts of xs [5, 2, 3] along axis 0: x_t W + b
    can be computed for every step at once before the loop."""
    xs = _parameter("xs", [5, 2, 3])
    return _rnn_over(xs, 0, [2, 3], {"xs": _sequence([5, 2, 3], 0)}, "rnn_step")


@scenario
def rnn_step_batch_first() -> Scenario:
    """The RNN step over xs [2, 5, 3] sliced along axis 1 (batch first): x_t [2, 3]."""
    xs = _parameter("xs", [2, 5, 3])
    return _rnn_over(xs, 1, [2, 3], {"xs": _sequence([2, 5, 3], 0)}, "rnn_batch_first")


@scenario
def reversed_vector_projection_runtime_trip_count() -> Scenario:
    """acc = acc / 2 + x_t W, x_t [3] the parts of xs [4, 3] read from its end, stopped after
    M = 2 iterations (the parts of xs[1] and xs[0] are never read)."""
    xs, acc0 = _parameter("xs", [4, 3]), _parameter("acc0", [2])
    acc = _parameter("acc", [2])
    part, x_t = _part("x_t", [3], 0)
    projected = ops.matmul(x_t, _weights(3, 2, 5), False, False)
    acc_next = ops.add(ops.multiply(acc, ops.constant(np.float32(0.5))), projected)
    results = [ops.result(acc_next), _stacked(acc_next), _always()]
    parameters = [xs, acc0]
    feeds = {"xs": _sequence([4, 3], 6), "acc0": np.array([1.0, -1.0], np.float32)}
    loop = _loop(
        "reversed_projection",
        results,
        [acc, part],
        [MergedInput(UNNUMBERED, 0, 0), SlicedInput(UNNUMBERED, 1, 0, start=-1, stride=-1, end=0)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [acc0.output(0), xs.output(0)],
        _trip(2, True, parameters, feeds),
        initial_condition(None),
        execution_condition=2,
    )
    return loop, parameters, feeds


def _sum_of(name: str, value: ov.Output, shape: list[int], parts: list, inputs, outer) -> tuple:
    """A body accumulating `value` (of `shape`) from zeros: its results and the loop pieces."""
    total = _parameter(name, shape)
    total_next = ops.add(total, value)
    parts.insert(0, total)
    inputs.insert(0, MergedInput(UNNUMBERED, 0, 0))
    outer.insert(0, ops.constant(np.zeros(shape, np.float32)).output(0))
    return [ops.result(total_next), _stacked(value), _always()]


@scenario
def sliced_operand_on_the_right() -> Scenario:
    """s = s + W x_t, x_t [3, 2] the parts of xs [4, 3, 2]; the stack of W x_t."""
    xs = _parameter("xs", [4, 3, 2])
    part, x_t = _part("x_t", [3, 2], 0)
    product = ops.matmul(_weights(5, 3, 7), x_t, False, False).output(0)
    body, inputs, outer = [part], [SlicedInput(UNNUMBERED, 1, 0)], [xs.output(0)]
    results = _sum_of("s", product, [5, 2], body, inputs, outer)
    loop = _loop(
        "right_operand",
        results,
        body,
        inputs,
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        outer,
        trip_count(ops.constant(np.int64(4)).output(0)),
        initial_condition(None),
        execution_condition=2,
    )
    return loop, [xs], {"xs": _sequence([4, 3, 2], 8)}


@scenario
def carried_value_feeds_the_matmul() -> Scenario:
    """h = tanh((x_t + h) W): the MatMul reads the carried h, so it stays in the body; x_t * 2
    (stacked) is elementwise work alone."""
    xs, h0 = _parameter("xs", [3, 2]), _parameter("h0", [2])
    h = _parameter("h", [2])
    part, x_t = _part("x_t", [2], 0)
    h_next = ops.tanh(ops.matmul(ops.add(x_t, h), _weights(2, 2, 9), False, False))
    doubled = ops.multiply(x_t, ops.constant(np.float32(2.0)))
    results = [ops.result(h_next), _stacked(doubled), _always()]
    loop = _loop(
        "carried_matmul",
        results,
        [h, part],
        [MergedInput(UNNUMBERED, 0, 0), SlicedInput(UNNUMBERED, 1, 0)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [h0.output(0), xs.output(0)],
        trip_count(None, [xs.output(0)], [0]),
        initial_condition(None),
        execution_condition=2,
    )
    feeds = {"xs": _sequence([3, 2], 10), "h0": np.array([0.5, -0.5], np.float32)}
    return loop, [xs, h0], feeds


@scenario
def parts_cut_in_opposite_directions() -> Scenario:
    """s = s + (x_t + z_t) W with z read from its end: the parts combine row i with row 2 - i,
    which no batched Add of xs and zs computes, so nothing is hoisted."""
    xs, zs = _parameter("xs", [3, 2]), _parameter("zs", [3, 2])
    x_part, x_t = _part("x_t", [2], 0)
    z_part, z_t = _part("z_t", [2], 0)
    product = ops.matmul(ops.add(x_t, z_t), _weights(2, 2, 11), False, False).output(0)
    body = [x_part, z_part]
    inputs = [SlicedInput(UNNUMBERED, 1, 0), SlicedInput(UNNUMBERED, 2, 0, -1, -1, 1, 0)]
    outer = [xs.output(0), zs.output(0)]
    results = _sum_of("s", product, [2], body, inputs, outer)
    loop = _loop(
        "opposite_directions",
        results,
        body,
        inputs,
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        outer,
        trip_count(ops.constant(np.int64(3)).output(0)),
        initial_condition(None),
        execution_condition=2,
    )
    feeds = {"xs": _sequence([3, 2], 12), "zs": _sequence([3, 2], 13)}
    return loop, [xs, zs], feeds


# -- per-gate products (MergeSharedMatMuls) ------------------------------------------------------
def _gates(value: ov.Output, rows: int, transposed: bool, seed: int) -> list[ov.Output]:
    """value @ W_k for four gates of 4 columns each, W_k a Constant ([4, rows] read transposed
    when `transposed`)."""
    gates = []
    for gate in range(4):
        weight = _weights(4, rows, seed + gate) if transposed else _weights(rows, 4, seed + gate)
        gates.append(ops.matmul(value, weight, False, transposed).output(0))
    return gates


def _lstm_step(path: str, xs: ov.Node, h0: ov.Output, c0: ov.Output, batch: int) -> LoopIR:
    """The LSTM step of lstm_step_per_gate_weights over the parts of xs along axis 0."""
    h, c = _parameter("h", [batch, 4]), _parameter("c", [batch, 4])
    part, x_t = _part("x_t", [batch, 3], 0)
    i, f, g, o = (
        ops.add(x_w, h_u)
        for x_w, h_u in zip(_gates(x_t, 3, False, 11), _gates(h.output(0), 4, True, 21))
    )
    c_next = ops.add(ops.multiply(ops.sigmoid(f), c), ops.multiply(ops.sigmoid(i), ops.tanh(g)))
    h_next = ops.multiply(ops.sigmoid(o), ops.tanh(c_next))
    results = [ops.result(h_next), ops.result(c_next), _stacked(h_next), _always()]
    return _loop(
        path,
        results,
        [h, c, part],
        [
            MergedInput(UNNUMBERED, 0, 0),
            MergedInput(UNNUMBERED, 1, 1),
            SlicedInput(UNNUMBERED, 2, 0),
        ],
        [
            LastValueOutput(UNNUMBERED, 0),
            LastValueOutput(UNNUMBERED, 1),
            ConcatenatedOutput(UNNUMBERED, 2, 0),
        ],
        [h0, c0, xs.output(0)],
        trip_count(None, [xs.output(0)], [0]),
        initial_condition(None),
        execution_condition=3,
    )


@scenario
def lstm_step_per_gate_weights() -> Scenario:
    """An LSTM step as jax2onnx writes flax's: each gate k is x_t W_k + h U_k (U_k read
    transposed), c = s(f) c + s(i) tanh(g), h = s(o) tanh(c); x_t [2, 3] the parts of xs
    [5, 2, 3]; h, c and the stack of h."""
    xs, h0, c0 = _parameter("xs", [5, 2, 3]), _parameter("h0", [2, 4]), _parameter("c0", [2, 4])
    feeds = {"xs": _sequence([5, 2, 3], 31), "h0": _sequence([2, 4], 32)}
    feeds["c0"] = _sequence([2, 4], 33)
    loop = _lstm_step("lstm_per_gate", xs, h0.output(0), c0.output(0), 2)
    return loop, [xs, h0, c0], feeds


@scenario
def lstm_step_symbolic_batch() -> Scenario:
    """The same step with T and B dynamic (xs [?, ?, 3]), h and c starting as rows h0 [1, 4]
    and c0 [1, 4] broadcast to B rows, B read from xs' shape (as jax2onnx starts a carry)."""
    xs, h0, c0 = _parameter("xs", [-1, -1, 3]), _parameter("h0", [1, 4]), _parameter("c0", [1, 4])
    rows = ops.gather(ops.shape_of(xs), _i64(1), ops.constant(np.int64(0)))
    shape = ops.concat([rows, _i64(4)], 0)
    starts = [ops.broadcast(start, shape).output(0) for start in (h0, c0)]
    feeds = {"xs": _sequence([5, 2, 3], 34), "h0": _sequence([1, 4], 35)}
    feeds["c0"] = _sequence([1, 4], 36)
    loop = _lstm_step("lstm_symbolic_batch", xs, *starts, -1)
    return loop, [xs, h0, c0], feeds


# -- accumulators (StackAccumulators) -------------------------------------------------------------
def _two_carried(path: str, results, parameters, initial, count) -> LoopIR:
    """A loop of the iteration number and two carried values (body Parameters 1 and 2, back
    edges Results 0 and 1, both last values outputs) over a runtime trip count `count`."""
    return _loop(
        path,
        results,
        parameters,
        [MergedInput(UNNUMBERED, 1, 0), MergedInput(UNNUMBERED, 2, 1)],
        [LastValueOutput(UNNUMBERED, 0), LastValueOutput(UNNUMBERED, 1)],
        [value.output(0) for value in initial],
        trip_count(count.output(0)),
        initial_condition(None),
        current_iteration=0,
        execution_condition=2,
    )


def _accumulator(path: str, trips: int, read_in_body: bool, rows: int = 1) -> Scenario:
    """acc = Concat(acc, [x * i]) along 0 with a runtime trip count, x a [2] carried value that
    doubles; acc starts non-empty. With `read_in_body`, x also adds acc's sum (so acc is read
    by another body node and must stay carried). With `rows` 2 the part is [x * i, -x * i]
    and acc starts with two rows (static: a carried value entering with fewer rows than a part
    is refused in a loop that may run zero times)."""
    count = _parameter("M", [], ov.Type.i64)
    acc0, x0 = _parameter("acc0", [-1 if rows == 1 else rows, 2]), _parameter("x0", [2])
    i, acc, x = _parameter("i", [], ov.Type.i64), _parameter("acc", [-1, 2]), _parameter("x", [2])
    row = ops.unsqueeze(ops.multiply(x, ops.convert(i, ov.Type.f32)), _i64(0))
    if rows == 2:
        row = ops.concat([row, ops.negative(row)], 0)
    x_next = ops.multiply(x, ops.constant(np.float32(2)))
    if read_in_body:
        x_next = ops.add(x_next, ops.reduce_sum(acc, _i64(0, 1)))
    results = [ops.result(ops.concat([acc, row], 0)), ops.result(x_next), _always()]
    loop = _two_carried(path, results, [i, acc, x], [acc0, x0], count)
    feeds = {
        "M": np.array(trips, np.int64),
        "acc0": np.array([[9.0, 8.0], [7.0, 6.0]][:rows], np.float32),
        "x0": np.array([1.0, -0.5], np.float32),
    }
    return loop, [count, acc0, x0], feeds


@scenario
def accumulator_grown_by_concat() -> Scenario:
    return _accumulator("accumulator", 3, read_in_body=False)


@scenario
def accumulator_grown_by_concat_zero_runs() -> Scenario:
    return _accumulator("accumulator_zero", 0, read_in_body=False)


@scenario
def accumulator_grown_by_two_rows() -> Scenario:
    return _accumulator("accumulator_rows", 3, read_in_body=False, rows=2)


@scenario
def accumulator_grown_by_two_rows_zero_runs() -> Scenario:
    return _accumulator("accumulator_rows_zero", 0, read_in_body=False, rows=2)


@scenario
def accumulator_also_read_in_the_body() -> Scenario:
    return _accumulator("accumulator_read", 3, read_in_body=True)


def _outer_products(path: str, trips: int, rows: int = 1) -> Scenario:
    """acc = acc + a^T b, a gradient's sum of outer products (passes/outer_products.py), over
    a runtime trip count: a = [x * i] ([x * i, -x * i] with `rows` 2) for x a [3] carried
    value that doubles, b = [i + 1, 1 - i] (and [1, i]); acc [3, 2] starts non-zero; the last
    acc and x."""
    count = _parameter("M", [], ov.Type.i64)
    acc0, x0 = _parameter("acc0", [3, 2]), _parameter("x0", [3])
    i, acc, x = _parameter("i", [], ov.Type.i64), _parameter("acc", [3, 2]), _parameter("x", [3])
    step = ops.convert(i, ov.Type.f32)
    a = ops.unsqueeze(ops.multiply(x, step), _i64(0))
    one = ops.constant(np.float32(1))

    def row(*scalars):
        return ops.concat([ops.reshape(v, _i64(1, 1), False) for v in scalars], 1)

    b = row(ops.add(step, one), ops.subtract(one, step))
    if rows == 2:
        a = ops.concat([a, ops.negative(a)], 0)
        b = ops.concat([b, row(one, step)], 0)
    total = ops.add(acc, ops.matmul(a, b, True, False))
    x_next = ops.multiply(x, ops.constant(np.float32(2)))
    results = [ops.result(total), ops.result(x_next), _always()]
    loop = _two_carried(path, results, [i, acc, x], [acc0, x0], count)
    feeds = {
        "M": np.array(trips, np.int64),
        "acc0": np.arange(6, dtype=np.float32).reshape(3, 2),
        "x0": np.array([1.0, -0.5, 0.25], np.float32),
    }
    return loop, [count, acc0, x0], feeds


@scenario
def outer_products_summed() -> Scenario:
    return _outer_products("outer_products", 4)


@scenario
def outer_products_summed_zero_runs() -> Scenario:
    return _outer_products("outer_products_zero", 0)


@scenario
def outer_products_of_two_rows_summed() -> Scenario:
    return _outer_products("outer_products_rows", 3, rows=2)


def _linear_recurrences(
    path: str, steps: int, coupled_nonlinearly: bool = False, broadcast: str = "numpy"
) -> Scenario:
    """Scalar steps over a constant trip count (passes/linear_recurrences.py): s_t a row of a
    [steps + 2] sequence, r an invariant; x = x * r + s_t (an AR(1)), acc = acc + x * s_t
    (reads x's previous value), c = c + i; the last x, acc and c and the stack of x * 2.
    With `coupled_nonlinearly` x also adds acc * acc (not linear in the carried values);
    `broadcast` is x * r's auto_broadcast ("none": it takes no [T] sequence times a scalar)."""
    seq, r0 = _parameter("s", [steps + 2]), _parameter("r", [])
    x0, acc0, c0 = _parameter("x0", []), _parameter("acc0", []), _parameter("c0", [])
    i, row, r = _parameter("i", [], ov.Type.i64), _parameter("s_t", [1]), _parameter("r_in", [])
    x, acc, c = _parameter("x", []), _parameter("acc", []), _parameter("c", [])
    s_t = ops.squeeze(row, _i64(0))
    b = ops.multiply(acc, acc) if coupled_nonlinearly else s_t
    x_next = ops.add(ops.multiply(x, r, auto_broadcast=broadcast), b)
    acc_next = ops.add(acc, ops.multiply(x, s_t))
    c_next = ops.add(ops.convert(i, ov.Type.f32), c)
    doubled = ops.unsqueeze(ops.multiply(x_next, ops.constant(np.float32(2))), _i64(0))
    results = [
        ops.result(x_next),
        ops.result(acc_next),
        ops.result(c_next),
        ops.result(doubled),
        _always(),
    ]
    loop = _loop(
        path,
        results,
        [i, row, r, x, acc, c],
        [
            MergedInput(UNNUMBERED, 3, 0),
            MergedInput(UNNUMBERED, 4, 1),
            MergedInput(UNNUMBERED, 5, 2),
            SlicedInput(UNNUMBERED, 1, 0),
            InvariantInput(UNNUMBERED, 2),
        ],
        [
            LastValueOutput(UNNUMBERED, 0),
            LastValueOutput(UNNUMBERED, 1),
            LastValueOutput(UNNUMBERED, 2),
            ConcatenatedOutput(UNNUMBERED, 3, 0),
        ],
        [x0.output(0), acc0.output(0), c0.output(0), seq.output(0), r0.output(0)],
        trip_count(ops.constant(np.int64(steps)).output(0)),
        initial_condition(None),
        current_iteration=0,
        execution_condition=4,
    )
    feeds = {
        "s": np.linspace(-1.0, 2.0, steps + 2, dtype=np.float32),
        "r": np.array(-0.7, np.float32),
        "x0": np.array(0.5, np.float32),
        "acc0": np.array(1.5, np.float32),
        "c0": np.array(-2.0, np.float32),
    }
    return loop, [seq, r0, x0, acc0, c0], feeds


@scenario
def linear_recurrences_of_scalars() -> Scenario:
    return _linear_recurrences("linear_recurrences", 7)


@scenario
def linear_recurrence_of_one_step() -> Scenario:
    return _linear_recurrences("linear_recurrence_once", 1)


@scenario
def recurrence_coupled_nonlinearly() -> Scenario:
    return _linear_recurrences("recurrence_nonlinear", 5, coupled_nonlinearly=True)


@scenario
def recurrence_without_broadcasting() -> Scenario:
    return _linear_recurrences("recurrence_no_broadcast", 5, broadcast="none")


@scenario
def invariant_matrix_times_column() -> Scenario:
    """h = tanh(x_t + W h) as PyTensor's scans write h W with Wᵀ given: W an invariant [3, 3]
    times h as a column [3, 1] (passes/row_products.py), twice (the product and its double
    share W); xs [4, 3] sliced; the last h and the stack of h."""
    xs, h0, w0 = _parameter("xs", [4, 3]), _parameter("h0", [3]), _parameter("W", [3, 3])
    x, h, w = _parameter("x_t", [1, 3]), _parameter("h", [3]), _parameter("W_in", [3, 3])
    column = ops.unsqueeze(h, _i64(1))
    product = ops.squeeze(ops.matmul(w, column, False, False), _i64(1))
    twice = ops.squeeze(ops.matmul(w, ops.add(column, column), False, False), _i64(1))
    step = ops.add(ops.squeeze(x, _i64(0)), ops.multiply(product, ops.constant(np.float32(0.5))))
    h_next = ops.tanh(ops.add(step, ops.multiply(twice, ops.constant(np.float32(0.25)))))
    results = [ops.result(h_next), _stacked(h_next), _always()]
    loop = _loop(
        "matrix_times_column",
        results,
        [x, h, w],
        [
            MergedInput(UNNUMBERED, 1, 0),
            SlicedInput(UNNUMBERED, 0, 0),
            InvariantInput(UNNUMBERED, 2),
        ],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [h0.output(0), xs.output(0), w0.output(0)],
        trip_count(None, [xs.output(0)], [0]),
        initial_condition(None),
        execution_condition=2,
    )
    rng = np.random.default_rng(3)
    feeds = {
        "xs": rng.standard_normal((4, 3)).astype(np.float32),
        "h0": np.array([0.5, -0.25, 1.0], np.float32),
        "W": rng.standard_normal((3, 3)).astype(np.float32),
    }
    return loop, [xs, h0, w0], feeds


UNROLL_COUNTS = (0, 1, 3, 4, 5, 14)  # around multiples of 4: 0, 1, k-1, k, k+1, 3k+2


def unrolling_loop(
    count: int | None,
    runtime: bool,
    stop_after: int | None = None,
    backward: bool = False,
    rows: int | None = None,
) -> Scenario:
    """acc = acc / 2 + x_t + i over xs [count + 3, 2] read forward or from its end, `count`
    times (a constant or a runtime M; None: xs' length), stopped after iteration `stop_after`
    by the body's condition when given; the last acc, the stack of acc along axis 0 and the
    stack of 2 * x_t along axis 1. With `rows`, acc is [rows, 2], declared [?, 2] (a dynamic
    batch)."""
    steps = 14 if count is None else count + 3
    shape = [2] if rows is None else [-1, 2]
    xs, acc0 = _parameter("xs", [steps, 2]), _parameter("acc0", shape)
    i, acc, part = (
        _parameter("i", [], ov.Type.i64),
        _parameter("acc", shape),
        _parameter("x_t", [1, 2]),
    )
    x_t = ops.squeeze(part, _i64(0))
    half = ops.multiply(acc, ops.constant(np.float32(0.5)))
    acc_next = ops.add(ops.add(half, x_t), ops.convert(i, ov.Type.f32))
    doubled = ops.multiply(x_t, ops.constant(np.float32(2.0)))
    keep_going = _always()
    if stop_after is not None:
        keep_going = ops.result(ops.less(i, ops.constant(np.int64(stop_after))))
    results = [ops.result(acc_next), _stacked(acc_next), _stacked(doubled, 1), keep_going]
    parameters = [xs, acc0]
    feeds = {
        "xs": np.arange(steps * 2, dtype=np.float32).reshape(steps, 2) - 5,
        "acc0": np.array([1.0, -1.0], np.float32),
    }
    if rows is not None:
        feeds["acc0"] = np.linspace(-1, 1, 2 * rows, dtype=np.float32).reshape(rows, 2)
    limit = None if count is None else _trip(count, runtime, parameters, feeds).value
    reading = dict(start=-1, stride=-1, end=0) if backward else {}
    loop = _loop(
        "unrolling",
        results,
        [i, acc, part],
        [MergedInput(UNNUMBERED, 1, 0), SlicedInput(UNNUMBERED, 2, 0, **reading)],
        [
            LastValueOutput(UNNUMBERED, 0),
            ConcatenatedOutput(UNNUMBERED, 1, 0),
            ConcatenatedOutput(UNNUMBERED, 2, 1),
        ],
        [acc0.output(0), xs.output(0)],
        trip_count(limit, [xs.output(0)], [0]),
        initial_condition(None),
        current_iteration=0,
        execution_condition=3,
    )
    return loop, parameters, feeds


def _unrolling_variant(count: int, runtime: bool):
    """The builder of unrolling_loop(count, runtime), registered under its trip count."""
    kind = "runtime" if runtime else "constant"
    return scenario_as(f"unroll_trip_count_{count}_{kind}")(lambda: unrolling_loop(count, runtime))


for _count in UNROLL_COUNTS:
    for _runtime in (False, True):
        _unrolling_variant(_count, _runtime)


@scenario
def unroll_early_exit_mid_chunk() -> Scenario:
    """No trip count but xs' length 14; the condition stops it after iteration 5."""
    return unrolling_loop(None, False, stop_after=5)


@scenario
def unroll_early_exit_and_runtime_trip_count() -> Scenario:
    return unrolling_loop(9, True, stop_after=6)


@scenario
def unroll_reversed_runtime_trip_count() -> Scenario:
    return unrolling_loop(5, True, backward=True)


@scenario
def unroll_reversed_constant_trip_count() -> Scenario:
    return unrolling_loop(14, False, backward=True)


def rnn_of_many_rows(count: int, runtime: bool) -> Scenario:
    """h = tanh(x_t @ W + h @ R) with h [16, 256] over xs [count + 2, 16, 256], `count` times
    (a constant or a runtime M): a body of 2M multiply-adds, which unrolling masks less deep.
    The last h and the stack of h."""
    rows, hidden = 16, 256
    xs, h0 = _parameter("xs", [count + 2, rows, hidden]), _parameter("h0", [rows, hidden])
    h, part = _parameter("h", [rows, hidden]), _parameter("x_t", [1, rows, hidden])
    rng = np.random.default_rng(7)
    weights = (rng.standard_normal((2, hidden, hidden)) * 0.05).astype(np.float32)
    W, R = ops.constant(weights[0]), ops.constant(weights[1])
    x_t = ops.squeeze(part, _i64(0))
    h_next = ops.tanh(ops.add(ops.matmul(x_t, W, False, False), ops.matmul(h, R, False, False)))
    parameters = [xs, h0]
    feeds = {
        "xs": rng.standard_normal((count + 2, rows, hidden)).astype(np.float32),
        "h0": np.zeros((rows, hidden), np.float32),
    }
    trip = _trip(count, runtime, parameters, feeds).value
    results = [ops.result(h_next), _stacked(h_next), _always()]
    return _carried_over_parts("rnn_rows", results, h, part, h0, xs, trip), parameters, feeds


def _carried_over_parts(path: str, results, carried, part, initial, xs, trip) -> LoopIR:
    """A loop carrying `carried` (from `initial`, body Result 0) over the parts of `xs` along
    axis 0 (`part`), at most `trip` times: the last carried value and the stack of Result 1;
    Result 2 is the condition."""
    return _loop(
        path,
        results,
        [carried, part],
        [MergedInput(UNNUMBERED, 0, 0), SlicedInput(UNNUMBERED, 1, 0)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [initial.output(0), xs.output(0)],
        trip_count(trip, [xs.output(0)], [0]),
        initial_condition(None),
        execution_condition=2,
    )


@scenario
def unroll_many_rows_runtime_trip_count() -> Scenario:
    return rnn_of_many_rows(5, True)


def batch_loop(grows: bool = False, runtime: bool = True) -> Scenario:
    """acc = tanh(acc + x_t) with acc [N, 2], N dynamic, over xs [7, 2], a trip count 6 (a
    runtime M, or a constant); with `grows`, acc = concat(acc, x_t) along 0 instead (a carried
    value whose shape changes every iteration). The stack of the column sums of acc."""
    xs, acc0 = _parameter("xs", [7, 2]), _parameter("acc0", [-1, 2])
    acc, x_t = _parameter("acc", [-1, 2]), _parameter("x_t", [1, 2])
    acc_next = ops.concat([acc, x_t], 0) if grows else ops.tanh(ops.add(acc, x_t))
    results = [ops.result(acc_next), _stacked(ops.reduce_sum(acc_next, _i64(0))), _always()]
    parameters = [xs, acc0]
    feeds = {
        "xs": np.linspace(-2, 2, 14, dtype=np.float32).reshape(7, 2),
        "acc0": np.full((3, 2), 0.25, np.float32),
    }
    trip = _trip(6, runtime, parameters, feeds).value
    return _carried_over_parts("batch", results, acc, x_t, acc0, xs, trip), parameters, feeds


@scenario
def unroll_dynamic_batch() -> Scenario:
    return batch_loop()


@scenario
def unroll_dynamic_batch_constant_trip_count() -> Scenario:
    return batch_loop(runtime=False)


@scenario
def unroll_carried_shape_grows() -> Scenario:
    return batch_loop(grows=True)


@scenario
def unroll_reads_capture_at_iteration_number() -> Scenario:
    """y = y + x[[i]] (a Gather) with x [5] captured and a runtime trip count 5: a copy masked
    for being past the trip count must still read inside x (the IR reference refuses an index
    past the end)."""
    x, y0 = _parameter("x", [5]), _parameter("y0", [1])
    i, y, x_in = _parameter("i", [], ov.Type.i64), _parameter("y", [1]), _parameter("x_in", [5])
    y_next = ops.add(y, ops.gather(x_in, ops.unsqueeze(i, _i64(0)), _i64(0)))
    results = [ops.result(y_next), _stacked(y_next), _always()]
    parameters = [x, y0]
    feeds = {"x": np.arange(5, dtype=np.float32) + 1, "y0": np.array([0.5], np.float32)}
    loop = _loop(
        "reads_capture",
        results,
        [i, y, x_in],
        [MergedInput(UNNUMBERED, 1, 0), InvariantInput(UNNUMBERED, 2)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [y0.output(0), x.output(0)],
        _trip(5, True, parameters, feeds),
        initial_condition(None),
        current_iteration=0,
        execution_condition=2,
    )
    return loop, parameters, feeds


@scenario
def iteration_parameter_after_an_output_only_one() -> Scenario:
    """acc += i over a constant 5 iterations; a Parameter before current_iteration's is read
    only by the body Result of output 0 (max(w, w)). A graph that does not read output 0 makes
    OpenVINO drop that Parameter, and (2026.4.1) the iteration goes to the wrong one."""
    w, count = _parameter("w", [2]), 5
    w_in, acc, i = (
        _parameter("w_in", [2]),
        _parameter("acc", [], ov.Type.i64),
        _parameter("i", [], ov.Type.i64),
    )
    acc_next = ops.add(acc, i)
    results = [ops.result(ops.maximum(w_in, w_in)), _always(), ops.result(acc_next)]
    loop = _loop(
        "iteration_after",
        results,
        [w_in, acc, i],
        [MergedInput(UNNUMBERED, 1, 2), InvariantInput(UNNUMBERED, 0)],
        [LastValueOutput(UNNUMBERED, 0), LastValueOutput(UNNUMBERED, 2)],
        [ops.constant(np.int64(0)).output(0), w.output(0)],
        trip_count(ops.constant(np.int64(count)).output(0)),
        initial_condition(None),
        current_iteration=2,
        execution_condition=1,
    )
    return loop, [w], {"w": np.array([1.0, -2.0], np.float32)}


@scenario
def growing_vector_of_static_length(length: int = 3) -> Scenario:
    """v = concat(v, x) carried from a v0 of static `length`, a runtime trip count of 3: the
    carried value enters with a static length the body changes (unbounded-carry-lengths)."""
    v0, x = _parameter("v0", [length]), _parameter("x", [1])
    v, x_in = _parameter("v", [-1]), _parameter("x_in", [1])
    v_next = ops.concat([v, x_in], 0)
    results = [ops.result(v_next), _always()]
    parameters = [v0, x]
    values = np.arange(1.0, length + 1.0, dtype=np.float32)
    feeds = {"v0": values, "x": np.array([-1.5], np.float32)}
    loop = _loop(
        "grow",
        results,
        [v, x_in],
        [MergedInput(UNNUMBERED, 0, 0), InvariantInput(UNNUMBERED, 1)],
        [LastValueOutput(UNNUMBERED, 0)],
        [v0.output(0), x.output(0)],
        _trip(3, True, parameters, feeds),
        initial_condition(None),
        execution_condition=1,
    )
    return loop, parameters, feeds


@scenario
def mean_of_a_concat_also_read_by_abs() -> Scenario:
    """acc += mean(c), c = concat(acc, acc), with |c| stacked, acc negative, a runtime trip
    count of 3: an Abs of a rank-1 Concat that another op reads (copy-concats-before-abs)."""
    acc0 = _parameter("acc0", [2])
    acc = _parameter("acc", [2])
    both = ops.concat([acc, acc], 0)
    mean = ops.reduce_mean(both, _i64(0), True)
    acc_next = ops.add(acc, mean)
    results = [ops.result(acc_next), _stacked(ops.abs(both)), _always()]
    parameters = [acc0]
    feeds = {"acc0": np.array([-1.0, -2.0], np.float32)}
    loop = _loop(
        "mean_and_abs",
        results,
        [acc],
        [MergedInput(UNNUMBERED, 0, 0)],
        [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, 0)],
        [acc0.output(0)],
        _trip(3, True, parameters, feeds),
        initial_condition(None),
        execution_condition=2,
    )
    return loop, parameters, feeds


def gathered_rows(count: int, runtime: bool, rows: int | None, projected: bool = True) -> Scenario:
    """h = tanh(h + xs[i] @ W) (a Gather of row i, a scalar index, of xs [4, 2, 3] captured;
    W a body Constant; without the product when not `projected`), `count` iterations (a
    runtime trip count M, or a constant), stacked h and last h; xs's own last value is given
    back (jax2onnx's Loop carries xs unchanged). `rows`: xs's declared first dim (None:
    dynamic)."""
    xs, h0 = _parameter("xs", [rows or -1, 2, 3]), _parameter("h0", [2, 3])
    i, h, xs_in = (
        _parameter("i", [], ov.Type.i64),
        _parameter("h", [2, 3]),
        _parameter("xs_in", [rows or -1, 2, 3]),
    )
    row = ops.gather(xs_in, i, _i64(0))
    if projected:
        row = ops.matmul(row, _weights(3, 3, 7), False, False)
    h_next = ops.tanh(ops.add(h, row))
    results = [ops.result(h_next), _stacked(h_next), ops.result(xs_in), _always()]
    parameters = [xs, h0]
    feeds = {"xs": _sequence([4, 2, 3], 5), "h0": np.full((2, 3), 0.25, np.float32)}
    loop = _loop(
        "gathered_rows",
        results,
        [i, h, xs_in],
        [MergedInput(UNNUMBERED, 1, 0), InvariantInput(UNNUMBERED, 2)],
        [
            LastValueOutput(UNNUMBERED, 0),
            ConcatenatedOutput(UNNUMBERED, 1, 0),
            LastValueOutput(UNNUMBERED, 2),
        ],
        [h0.output(0), xs.output(0)],
        _trip(count, runtime, parameters, feeds),
        initial_condition(None),
        current_iteration=0,
        execution_condition=3,
    )
    return loop, parameters, feeds


@scenario
def gathered_rows_runtime_trip_count() -> Scenario:
    return gathered_rows(4, True, None)


@scenario
def gathered_rows_runtime_trip_count_zero() -> Scenario:
    return gathered_rows(0, True, None)


@scenario
def gathered_rows_constant_trip_count() -> Scenario:
    return gathered_rows(3, False, 4)
