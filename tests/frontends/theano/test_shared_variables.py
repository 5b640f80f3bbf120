"""Shared variables, updates and `ov_loops.function`: the guide's shared counter, updates returned
by fn in every form Theano allows, the strict rules, and the state across calls, requests and
resets. Every model goes through IR (saved, validated, read back) before it runs."""

from __future__ import annotations

import gc

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from tests.harness import compile_f32

F32, I32 = np.float32, np.int32


def _request(model: ov.Model, tmp_path) -> ov.InferRequest:
    """Save the model, validate it (no finding), read it back, compile on CPU in f32."""
    xml = tmp_path / f"{model.get_friendly_name()}.xml"
    ov_loops.save(model, xml)
    report = ov_loops.validate(xml)
    assert not report.findings, [f.message for f in report.findings]
    return compile_f32(xml).create_infer_request()


def _state(request: ov.InferRequest, shared: ov.Node) -> np.ndarray:
    """The state of a shared variable in a request (its variable id is its node's name)."""
    (state,) = [s for s in request.query_state() if s.name == shared.get_friendly_name()]
    return np.array(state.state.data)


def _outputs(request: ov.InferRequest, feeds=None) -> list[np.ndarray]:
    return [np.array(v) for v in request.infer(feeds or {}).to_tuple()]


def test_shared_counter_example(tmp_path):
    """The guide: b = a + 1 reads a before the call, c = updates[a] + 1 after the 10 steps;
    with the updates a grows by 10 per call, without them it stays."""
    a = ov_loops.shared(1, "a")
    values, updates = ov_loops.scan(lambda: {a: a + 1}, n_steps=10)
    assert values == [] and list(updates) == [a]
    b = a + 1
    c = ops.add(updates[a], 1)
    counting = _request(ov_loops.function([], [b, c], updates=updates, name="counting"), tmp_path)
    fixed = _request(ov_loops.function([], [b, c], name="fixed"), tmp_path)
    a_value = 1
    for _ in range(3):
        assert _outputs(counting) == [a_value + 1, a_value + 10 + 1]
        a_value += 10
        assert _state(counting, a).item() == a_value
        assert _outputs(fixed) == [2, 12] and _state(fixed, a).item() == 1
    counting.reset_state()  # the next call reads the initial value (query_state shows 0 before)
    assert _outputs(counting) == [2, 12] and _state(counting, a).item() == 11


def test_resetting_one_variable_keeps_the_others(tmp_path):
    first, second = ov_loops.shared(np.float32(1), "first"), ov_loops.shared(np.float32(1), "s")
    updates = {first: ops.add(first, F32(1)), second: ops.add(second, F32(10))}
    request = _request(ov_loops.function([], [first, second], updates=updates, name="m"), tmp_path)
    for _ in range(2):  # first: 1 -> 3, s: 1 -> 21
        _outputs(request)
    (state,) = [s for s in request.query_state() if s.name == first.get_friendly_name()]
    state.reset()
    assert _outputs(request) == [1, 21]


def test_an_update_of_a_variable_nothing_reads(tmp_path):
    """{a: x}, with nothing reading a: stored all the same (OpenVINO needs a ReadValue for it)."""
    a = ov_loops.shared(np.float32(1), "a")
    x = ops.parameter([], F32, name="x")
    doubled = ops.multiply(x, F32(2))
    request = _request(ov_loops.function([x], doubled, updates={a: x}, name="m"), tmp_path)
    for value in (3, 5):
        assert _outputs(request, {"x": F32(value)}) == [2 * value]
        assert _state(request, a).item() == value


def test_each_request_holds_its_own_state(tmp_path):
    a = ov_loops.shared(np.float32(0.5), "a")
    _, updates = ov_loops.scan(lambda: {a: ops.multiply(a, F32(2))}, n_steps=3)
    compiled = _request(ov_loops.function([], [a], updates=updates, name="m"), tmp_path)
    other = compiled.get_compiled_model().create_infer_request()
    assert [_outputs(compiled)[0].item() for _ in range(3)] == [0.5, 4.0, 32.0]
    assert _outputs(other)[0].item() == 0.5


@pytest.mark.parametrize("order", ["outputs, updates", "updates, outputs", "with until"])
def test_fn_returns_outputs_and_updates(tmp_path, order):
    """fn returns (outputs, updates) or (updates, outputs), optionally then `until`: the outputs
    per step, and `total` accumulating the sequence over the steps and over the calls."""
    total = ov_loops.shared(np.float32(0), "total")
    seq = ops.parameter([-1], F32, name="seq")

    def step(x):
        doubled, update = ops.multiply(x, F32(2)), {total: ops.add(total, x)}
        if order == "outputs, updates":
            return doubled, update
        if order == "updates, outputs":
            return update, doubled
        return doubled, update, ov_loops.until(ops.greater(x, F32(100)))

    doubled, updates = ov_loops.scan(step, sequences=seq)
    request = _request(ov_loops.function([seq], doubled, updates=updates, name="m"), tmp_path)
    x = np.array([1, 2, 3.5], F32)
    for call in range(1, 3):
        np.testing.assert_array_equal(_outputs(request, {"seq": x})[0], 2 * x)
        assert _state(request, total).item() == call * x.sum()


def test_an_updated_shared_variable_passed_in_non_sequences(tmp_path):
    """Under strict=True a shared variable fn updates must be a non_sequence; fn then reads the
    carried value through its argument."""
    a = ov_loops.shared(np.float32(1), "a")
    _, updates = ov_loops.scan(
        lambda a_t: {a: ops.add(a_t, F32(1))}, n_steps=4, non_sequences=[a], strict=True
    )
    request = _request(ov_loops.function([], [updates[a]], updates=updates, name="m"), tmp_path)
    assert [_outputs(request)[0].item() for _ in range(2)] == [5, 9]
    with pytest.raises(
        ov_loops.BuilderError, match=r"fn: updates shared variable a(_\d+)?, not in"
    ):
        ov_loops.scan(lambda: {ov_loops.shared(F32(1), "a"): F32(2)}, n_steps=1, strict=True)


def test_strict_needs_every_shared_variable_in_non_sequences():
    W, b = ov_loops.shared(np.eye(2, dtype=F32), "W"), ov_loops.shared(np.zeros(2, F32), "b")
    x = ops.parameter([-1, 2], F32, name="x")

    def uses_both(row, *_):
        return ops.add(ops.matmul(row, W, False, False), b)

    with pytest.raises(
        ov_loops.BuilderError, match=r"fn: uses W(_\d+)?, b(_\d+)? from outside .*strict=True"
    ):
        ov_loops.scan(uses_both, sequences=x, strict=True)
    with pytest.raises(
        ov_loops.BuilderError, match=r"fn: uses b(_\d+)? from outside .*strict=True"
    ):
        ov_loops.scan(uses_both, sequences=x, non_sequences=[W], strict=True)
    ov_loops.scan(uses_both, sequences=x, non_sequences=[W, b], strict=True)


def test_a_shared_variable_fn_reads_is_read_at_each_call(tmp_path):
    """Without strict a shared variable fn only reads is found (an invariant input): setting its
    state between calls, as Theano's set_value does, changes the next call's result."""
    scale = ov_loops.shared(np.float32(2), "scale")
    x = ops.parameter([-1], F32, name="x")
    scaled, updates = ov_loops.scan(lambda v: ops.multiply(v, scale), sequences=x)
    assert updates == {}
    request = _request(ov_loops.function([x], scaled, name="m"), tmp_path)
    values = np.array([1, 2, 3], F32)
    np.testing.assert_array_equal(_outputs(request, {"x": values})[0], 2 * values)
    (state,) = request.query_state()
    state.state = ov.Tensor(np.array(5, F32))
    np.testing.assert_array_equal(_outputs(request, {"x": values})[0], 5 * values)


def test_zero_steps_leave_the_value_unchanged(tmp_path):
    a = ov_loops.shared(np.float32(3), "a")
    steps = ops.parameter([], np.int64, name="steps")
    _, updates = ov_loops.scan(lambda: {a: ops.multiply(a, F32(2))}, n_steps=steps)
    request = _request(ov_loops.function([steps], updates[a], updates=updates, name="m"), tmp_path)
    got = [_outputs(request, {"steps": np.int64(k)})[0].item() for k in (2, 0, 1)]
    assert got == [12, 12, 24]


@pytest.mark.parametrize("returned", ["inner updates", "inner outputs"])
def test_inner_scan_updates_reach_the_outer_scan(tmp_path, returned):
    """An inner scan's updates are carried by the scan whose fn made it, whether fn returns them
    (Theano's form) or only values computed by that inner scan (found in the graph): a counter
    bumped on every inner step grows by outer steps x inner steps per call."""
    counter = ov_loops.shared(np.int32(0), "counter")

    def outer_step():
        def inner_step():
            return ops.multiply(counter, I32(2)), {counter: ops.add(counter, I32(1))}

        doubled, inner = ov_loops.scan(inner_step, n_steps=3)
        return inner if returned == "inner updates" else ops.reduce_sum(doubled, I32(0))

    _, updates = ov_loops.scan(outer_step, n_steps=4)
    assert list(updates) == [counter]
    request = _request(ov_loops.function([], updates[counter], updates=updates, name="m"), tmp_path)
    assert [_outputs(request)[0].item() for _ in range(2)] == [12, 24]


def test_bad_updates_are_one_line_errors_naming_the_variable():
    a = ov_loops.shared(np.int32(1), "a")
    with pytest.raises(ov_loops.SharedVariableError, match="shared variable a_?[0-9]* is f32"):
        ov_loops.scan(lambda: {a: ops.constant(F32(1))}, n_steps=1)
    with pytest.raises(ov_loops.SharedVariableError, match="has shape \\[2\\]"):
        ov_loops.function([], [a], updates={a: ops.constant(np.zeros(2, I32))})
    with pytest.raises(ov_loops.SharedVariableError, match="is not a shared variable"):
        ov_loops.function([], [a], updates={ops.constant(I32(1)): a})
    with pytest.raises(ov_loops.SharedVariableError, match="inputs\\[0\\] is not a Parameter"):
        ov_loops.function([a], [a])
    with pytest.raises(ov_loops.SharedVariableError, match="dtype <U1 cannot be held"):
        ov_loops.shared("x", "text")
    with pytest.raises(ov_loops.SharedVariableError, match="int64 values beyond int32"):
        ov_loops.shared(2**40, "big")
    before = ops.add(a, I32(1))  # built outside fn from a, which fn updates
    with pytest.raises(ov_loops.BuilderError, match="built before scan from a shared variable"):
        ov_loops.scan(lambda: {a: before}, n_steps=2)


def test_one_shared_variable_in_two_functions(tmp_path):
    """Each `function` call gives the variable its own Assign: two models of one shared variable
    run side by side, each with its own update and state."""
    a = ov_loops.shared(np.int32(1), "a")
    plus_one = ov_loops.function([], a, updates={a: ops.add(a, I32(1))}, name="plus_one")
    doubled = ov_loops.function([], a, updates={a: ops.multiply(a, I32(2))}, name="doubled")
    requests = [_request(model, tmp_path) for model in (plus_one, doubled)]
    calls = [[_outputs(request)[0].item() for _ in range(4)] for request in requests]
    assert calls == [[1, 2, 3, 4], [1, 2, 4, 8]]


def test_two_shared_variables_of_one_name_in_a_model_are_an_error():
    first, second = ov_loops.shared(np.int32(1), "a"), ov_loops.shared(np.int32(2), "a")
    with pytest.raises(ov_loops.SharedVariableError, match="two shared variables named a"):
        ov_loops.function([], [first, second])
    unnamed = [ov_loops.shared(np.int32(k)) for k in range(2)]
    names = {sink.get_variable_id() for sink in ov_loops.function([], unnamed).get_sinks()}
    assert len(names) == 2


def test_many_shared_variables_leave_no_objects_behind():
    """Nothing outlives a shared variable, its models and its scans (no registry on the side)."""

    def build() -> None:
        a = ov_loops.shared(np.zeros(3, F32), "a")
        _, updates = ov_loops.scan(lambda: {a: ops.add(a, F32(1))}, n_steps=2)
        ov_loops.function([], a, updates=updates)

    build()  # warm up OpenVINO's and the lowering's own caches
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(100):
        build()
    gc.collect()
    grown = len(gc.get_objects()) - before
    assert grown < 50, f"{grown} objects left behind by 100 shared variables"
